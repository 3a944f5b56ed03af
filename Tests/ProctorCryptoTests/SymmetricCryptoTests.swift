import ProctorCrypto
import Testing

@Suite struct SymmetricCryptoTests {
    @Test func randomBytesDifferAndKeysHaveStableIDs() throws {
        let a = try SecureRandom.bytes(count: 32), b = try SecureRandom.bytes(count: 32)
        #expect(a.count == 32 && a != b)
        let key = try SymmetricKey.random()
        #expect(key.keyID.count == 16)
        #expect(try SymmetricKey(copying: key.withUnsafeBytes { Array($0) }).keyID == key.keyID)
        #expect(try SymmetricKey.random().keyID != key.keyID)
        #expect(!key.description.contains(key.withUnsafeBytes { $0.map { String($0, radix: 16) }.joined() }))
        #expect(throws: CryptoError.wrongLength(what: "a symmetric key", expected: 32, actual: 31)) {
            try SymmetricKey(copying: [UInt8](repeating: 1, count: 31))
        }
    }

    @Test func constantTimeCompare() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equals([], []))
    }

    @Test func wrappedKeyUnwrapsOnlyWithItsWrappingKeyAndContext() throws {
        let machine = try SymmetricKey.random()
        let data = try SymmetricKey.random()
        let context = "app=com.example.notes uid=1000"
        let wrapped = try KeyWrapping.wrap(data, with: machine, context: context)
        #expect(wrapped.count == KeyWrapping.wrappedByteCount)
        #expect(try KeyWrapping.unwrap(wrapped, with: machine, context: context).keyID == data.keyID)
        // A fresh nonce each time: wrapping twice gives different bytes.
        #expect(try KeyWrapping.wrap(data, with: machine, context: context) != wrapped)

        let failed = CryptoError.authenticationFailed(what: "the wrapped key")
        #expect(throws: failed) { try KeyWrapping.unwrap(wrapped, with: SymmetricKey.random(), context: context) }
        #expect(throws: failed) { try KeyWrapping.unwrap(wrapped, with: machine, context: "app=com.example.notes uid=1001") }
        for index in [1, 30, wrapped.count - 1] {
            var altered = wrapped
            altered[index] ^= 0x01
            #expect(throws: failed) { try KeyWrapping.unwrap(altered, with: machine, context: context) }
        }
        #expect(throws: CryptoError.wrongLength(what: "a wrapped key", expected: 73, actual: 72)) {
            try KeyWrapping.unwrap(Array(wrapped.dropLast()), with: machine, context: context)
        }
    }

    /// Seals `chunks` (the last one final) and returns the header and sealed chunks.
    private func seal(_ chunks: [String], key: SymmetricKey, ad: [UInt8] = []) throws -> ([UInt8], [[UInt8]]) {
        let sealer = try SecretStreamSealer(key: key)
        let sealed = chunks.enumerated().map { index, text in
            sealer.seal(Array(text.utf8), associatedData: ad, isFinal: index == chunks.count - 1)
        }
        #expect(sealer.isFinished)
        return (sealer.header, sealed)
    }

    private func open(_ header: [UInt8], _ sealed: [[UInt8]], key: SymmetricKey, ad: [UInt8] = []) throws -> [String] {
        let opener = try SecretStreamOpener(key: key, header: header)
        var texts: [String] = []
        for chunk in sealed { texts.append(String(decoding: try opener.open(chunk, associatedData: ad).plaintext, as: UTF8.self)) }
        try opener.finish()
        return texts
    }

    @Test func secretStreamRoundTrips() throws {
        let key = try SymmetricKey.random()
        let (header, sealed) = try seal(["first", "", "third"], key: key, ad: [7])
        #expect(header.count == SecretStream.headerSize)
        #expect(sealed.map(\.count) == [5, 0, 5].map { $0 + SecretStream.chunkOverhead })
        #expect(try open(header, sealed, key: key, ad: [7]) == ["first", "", "third"])
    }

    @Test func secretStreamDetectsTamperTruncationReorderingAndWrongKey() throws {
        let key = try SymmetricKey.random()
        let (header, sealed) = try seal(["one", "two", "three"], key: key)

        var flipped = sealed
        flipped[1][4] ^= 0x80
        #expect(throws: CryptoError.authenticationFailed(what: "stream chunk 2")) { try open(header, flipped, key: key) }

        #expect(throws: CryptoError.truncatedStream(chunksRead: 2)) { try open(header, Array(sealed.prefix(2)), key: key) }
        #expect(throws: CryptoError.authenticationFailed(what: "stream chunk 1")) {
            try open(header, [sealed[1], sealed[0], sealed[2]], key: key)
        }
        #expect(throws: CryptoError.authenticationFailed(what: "stream chunk 2")) {
            try open(header, [sealed[0], sealed[0], sealed[1], sealed[2]], key: key)
        }
        #expect(throws: CryptoError.dataAfterFinalChunk) { try open(header, sealed + [sealed[2]], key: key) }
        #expect(throws: CryptoError.authenticationFailed(what: "stream chunk 1")) { try open(header, sealed, key: SymmetricKey.random()) }
        #expect(throws: CryptoError.authenticationFailed(what: "stream chunk 1")) { try open(header, sealed, key: key, ad: [1]) }
        var otherHeader = header
        otherHeader[0] ^= 1
        #expect(throws: CryptoError.authenticationFailed(what: "stream chunk 1")) { try open(otherHeader, sealed, key: key) }
        // Chunks of another stream under the same key do not splice in.
        let (_, other) = try seal(["one", "two", "three"], key: key)
        #expect(throws: CryptoError.authenticationFailed(what: "stream chunk 2")) {
            try open(header, [sealed[0], other[1], sealed[2]], key: key)
        }
    }
}
