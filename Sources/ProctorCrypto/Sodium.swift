import CSodium

/// libsodium's one-time initialisation.
enum Sodium {
    /// Swift runs a static's initialiser once, under a lock, on first use: `sodium_init` is called
    /// exactly once per process whichever thread gets here first.
    private static let initialized: Bool = sodium_init() >= 0

    /// Initialises libsodium if needed; every public entry point that uses it calls this first.
    static func ready() throws(CryptoError) {
        guard initialized else { throw .libraryUnavailable }
    }
}

/// A pointer for libsodium's `const unsigned char *` parameters, never nil (libsodium reads no
/// byte of an empty input, but some of its functions do not accept NULL).
@inline(__always)
func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
    guard let base = buffer.baseAddress else { return emptyInput }
    return base.assumingMemoryBound(to: UInt8.self)
}

/// A pointer for libsodium's `unsigned char *` outputs.
@inline(__always)
func mutableBytes(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8> {
    guard let base = buffer.baseAddress else { return UnsafeMutablePointer(mutating: emptyInput) }
    return base.assumingMemoryBound(to: UInt8.self)
}

private nonisolated(unsafe) let emptyStorage = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
private var emptyInput: UnsafePointer<UInt8> { UnsafePointer(emptyStorage) }
