import ProctorCrypto
import Testing

/// BLAKE2b-256 and its hash list against Python's `hashlib.blake2b(digest_size=32)`, an
/// implementation of its own: the expected digests below were computed with it.
@Suite struct DigestTests {
    /// 200 000 bytes: three 64 KiB chunks and a last one of 3 392 bytes.
    static let data = (0..<200_000).map { UInt8($0 * 7 % 251) }

    @Test func blake2b256MatchesAnIndependentImplementation() {
        #expect(BLAKE2b256.hex(of: Self.data[...]) == "61ec41b3f04ee044fcf981ff7b462e0eb9e26a31b6cad1f19a1cd20d4e1ca0fd")
        #expect(BLAKE2b256.hex(of: [][...]) == "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8")
    }

    @Test func theHashListIsTheDigestOfTheChunksDigestsInOrder() {
        // b(b(d[0..<65536]) ‖ b(d[65536..<131072]) ‖ b(d[131072..<196608]) ‖ b(d[196608...]))
        #expect(BLAKE2b256.hashListHex(of: Self.data[...], chunkSize: 65_536)
            == "05bd9412614fc465ffe91a77670f07069d53dfe0a3d021378dc9260f57818ebf")
        // One chunk: the digest of its digest, not the digest itself.
        #expect(BLAKE2b256.hashListHex(of: Self.data[..<65_536], chunkSize: 65_536)
            == "8501c4e17ff8eee653e6bbb96f0dad3fe93b9dc13c6654a9a6785ea03dc33b93")
        // No chunks: the digest of nothing.
        #expect(BLAKE2b256.hashListHex(of: [][...], chunkSize: 65_536) == BLAKE2b256.hex(of: [][...]))
    }

    @Test func theHashListDependsOnTheChunkSizeAndOnEveryChunksPlace() {
        let list = BLAKE2b256.hashListHex(of: Self.data[...], chunkSize: 65_536)
        #expect(BLAKE2b256.hashListHex(of: Self.data[...], chunkSize: 131_072) != list)
        // The first two chunks swapped: every chunk digest is still in the list, but not in order.
        let swapped = Array(Self.data[65_536..<131_072] + Self.data[..<65_536] + Self.data[131_072...])
        #expect(swapped.count == Self.data.count)
        #expect(BLAKE2b256.hashListHex(of: swapped[...], chunkSize: 65_536) != list)
    }
}
