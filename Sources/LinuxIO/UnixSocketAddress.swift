public import Glibc

/// An AF_UNIX socket address (`unix(7)`), a path or a name in the abstract namespace, filled
/// into a `sockaddr_un` once and handed to `bind`, `connect` or `sendto` with its length.
public struct UnixSocketAddress: Sendable {
    private var address = sockaddr_un()
    /// The length the kernel is given: a path's bytes and their terminating NUL; an abstract
    /// name's leading NUL and bytes, with none after (every byte of the name counts).
    public let length: socklen_t

    /// The longest path, in bytes, without its terminating NUL; also the longest abstract name.
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// `path`, or nil when it is empty, holds a NUL or is longer than `maximumPathLength`.
    public init?(path: String) {
        self.init(Array(path.utf8), abstract: false)
    }

    /// `name` in the abstract namespace (written `@name`), or nil when it is empty, holds a NUL
    /// or is longer than `maximumPathLength`.
    public init?(abstractName name: String) {
        self.init(Array(name.utf8), abstract: true)
    }

    private init?(_ bytes: [UInt8], abstract: Bool) {
        guard !bytes.isEmpty, !bytes.contains(0), bytes.count <= Self.maximumPathLength else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            // Zero-filled already: a path's terminating NUL, or an abstract name's leading one.
            path.baseAddress!.advanced(by: abstract ? 1 : 0).copyMemory(from: bytes, byteCount: bytes.count)
        }
        length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + bytes.count + 1)
    }

    /// Calls `body` with the address as a `sockaddr` and its length.
    public func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }
}
