/// SHA-256 (FIPS 180-4) in plain Swift, for policy identities; the toolchain offers no
/// hash that the policy library could use without I/O or a C dependency.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
            (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
        // Whole blocks are hashed where they lie; only the tail is copied, to be padded
        // with 0x80, zeros and the message's bit length into one or two final blocks.
        let wholeBlockBytes = bytes.count / 64 * 64
        var tail = [UInt8](bytes[wholeBlockBytes...])
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        let bitLength = UInt64(bytes.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            roundConstants.withUnsafeBufferPointer { constants in
                bytes.withUnsafeBufferPointer { message in
                    compress(UnsafeBufferPointer(rebasing: message[0..<wholeBlockBytes]), into: &state, schedule: schedule, constants: constants)
                }
                tail.withUnsafeBufferPointer { tail in
                    compress(tail, into: &state, schedule: schedule, constants: constants)
                }
            }
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            for shift in stride(from: 24, through: 0, by: -8) { digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return digest
    }

    /// Runs the compression function over every 64-byte block of `blocks` (whose count is a
    /// multiple of 64). Unchecked indexing and wrapping arithmetic: every index below is in
    /// range by construction, and this loop is most of the cost of hashing a large policy.
    private static func compress(_ blocks: UnsafeBufferPointer<UInt8>,
                                 into state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
                                 schedule w: UnsafeMutableBufferPointer<UInt32>, constants k: UnsafeBufferPointer<UInt32>) {
        guard let base = blocks.baseAddress else { return }
        var blockStart = 0
        while blockStart < blocks.count {
            let block = base + blockStart
            for t in 0..<16 {
                let p = block + t &* 4
                w[t] = UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3])
            }
            for t in 16..<64 {
                let w15 = w[t &- 15], w2 = w[t &- 2]
                let s0 = rotateRight(w15, 7) ^ rotateRight(w15, 18) ^ (w15 >> 3)
                let s1 = rotateRight(w2, 17) ^ rotateRight(w2, 19) ^ (w2 >> 10)
                w[t] = w[t &- 16] &+ s0 &+ w[t &- 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = state
            for t in 0..<64 {
                let sum1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
                let choose = (e & f) ^ (~e & g)
                let temp1 = h &+ sum1 &+ choose &+ k[t] &+ w[t]
                let sum0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let temp2 = sum0 &+ majority
                (h, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ temp2)
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d,
                     state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
            blockStart &+= 64
        }
    }

    /// The digest of `bytes` as 64 lowercase hex digits.
    public static func hexDigest(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in hash(bytes) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    @inline(__always)
    private static func rotateRight(_ value: UInt32, _ count: UInt32) -> UInt32 { value >> count | value << (32 &- count) }

    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
}

extension SHA256 {
    /// The hex digest of a string's UTF-8 bytes.
    public static func hexDigest(of text: String) -> String { hexDigest(Array(text.utf8)) }
}
