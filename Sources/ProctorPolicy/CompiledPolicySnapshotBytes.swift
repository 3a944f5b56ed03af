/// Bytes of a compiled-policy snapshot, written by `SnapshotEncoder` and read back by
/// `SnapshotDecoder`: little-endian integers, length-prefixed strings and raw runs of plain
/// values, each read checked against the end of the input so that a damaged snapshot gives
/// `SnapshotDamage`, never a read out of bounds.
public struct SnapshotEncoder: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    public mutating func append(_ value: Int) {
        withUnsafeBytes(of: Int64(value).littleEndian) { bytes += $0 }
    }

    public mutating func append(_ text: String) {
        append(text.utf8.count)
        bytes += text.utf8
    }

    mutating func append(_ texts: [String]) {
        append(texts.count)
        for text in texts { append(text) }
    }

    /// `raw` as it is in memory, after its length.
    mutating func append(raw: UnsafeRawBufferPointer) {
        append(raw.count)
        bytes += raw
    }
}

/// Why a snapshot's bytes cannot stand for a compiled policy.
public struct SnapshotDamage: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// Reads what `SnapshotEncoder` wrote from `bytes`, which must outlive it.
public struct SnapshotDecoder {
    private let bytes: UnsafeRawBufferPointer
    public private(set) var offset = 0

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    public var isAtEnd: Bool { offset == bytes.count }

    /// The next `count` bytes, or `SnapshotDamage` naming `what` when fewer are left.
    mutating func take(_ count: Int, _ what: String) throws(SnapshotDamage) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= bytes.count - offset else {
            throw SnapshotDamage("\(what) at byte \(offset) runs past the end (\(count) bytes, \(bytes.count - offset) left)")
        }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    public mutating func readUInt32(_ what: String) throws(SnapshotDamage) -> UInt32 {
        UInt32(littleEndian: try take(4, what).loadUnaligned(as: UInt32.self))
    }

    /// A count or length: at least 0 and at most `limit`.
    public mutating func readInt(_ what: String, limit: Int = Int(Int32.max)) throws(SnapshotDamage) -> Int {
        let value = Int64(littleEndian: try take(8, what).loadUnaligned(as: Int64.self))
        guard value >= 0, value <= limit else { throw SnapshotDamage("\(what) \(value) is out of range 0...\(limit)") }
        return Int(value)
    }

    public mutating func readString(_ what: String) throws(SnapshotDamage) -> String {
        let raw = try take(try readInt("the length of \(what)"), what)
        guard let text = String(validating: raw.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
            throw SnapshotDamage("\(what) is not UTF-8")
        }
        return text
    }

    mutating func readStrings(_ what: String) throws(SnapshotDamage) -> [String] {
        let count = try readInt("the number of \(what)")
        var texts: [String] = []
        texts.reserveCapacity(min(count, bytes.count - offset))
        for _ in 0..<count { texts.append(try readString(what)) }
        return texts
    }

    /// A run written by `append(raw:)`, which must hold `count` values of `stride` bytes.
    mutating func readRaw(_ what: String, count: Int, stride: Int) throws(SnapshotDamage) -> UnsafeRawBufferPointer {
        let length = try readInt("the length of \(what)", limit: Int.max)
        guard length == count * stride else {
            throw SnapshotDamage("\(what) is \(length) bytes, expected \(count) × \(stride)")
        }
        return try take(length, what)
    }
}

/// XXH64 (Yann Collet's xxHash, 64-bit, seed 0): the snapshot's checksum. It only has to
/// catch damage — a torn or truncated write, a flipped bit — in a file in proctord's private
/// state directory, which nobody but proctord (and root) can write; an attacker who can write
/// it can also edit `policy.d`. At ≈ 8 bytes a cycle it costs a millisecond or two over a
/// 100 000-app snapshot, where SHA-256 or BLAKE2b cost tens (docs/state.md).
public enum SnapshotChecksum {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    public static func xxh64(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var offset = 0
        func word(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
            rotate(accumulator &+ input &* p2, 31) &* p1
        }
        var hash: UInt64
        if count >= 32 {
            var v1 = p1 &+ p2, v2 = p2, v3: UInt64 = 0, v4 = 0 &- p1
            while offset + 32 <= count {
                v1 = round(v1, word(offset))
                v2 = round(v2, word(offset + 8))
                v3 = round(v3, word(offset + 16))
                v4 = round(v4, word(offset + 24))
                offset += 32
            }
            hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
            for lane in [v1, v2, v3, v4] { hash = (hash ^ round(0, lane)) &* p1 &+ p4 }
        } else {
            hash = p5
        }
        hash &+= UInt64(count)
        while offset + 8 <= count {
            hash = rotate(hash ^ round(0, word(offset)), 27) &* p1 &+ p4
            offset += 8
        }
        if offset + 4 <= count {
            let half = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            hash = rotate(hash ^ half &* p1, 23) &* p2 &+ p3
            offset += 4
        }
        while offset < count {
            hash = rotate(hash ^ UInt64(bytes[offset]) &* p5, 11) &* p1
            offset += 1
        }
        hash = (hash ^ hash >> 33) &* p2
        hash = (hash ^ hash >> 29) &* p3
        return hash ^ hash >> 32
    }

    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 { value << bits | value >> (64 - bits) }
}
