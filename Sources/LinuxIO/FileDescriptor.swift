public import Glibc

/// An open Linux file descriptor: a plain `CInt` with typed operations.
///
/// A value of this type does not own the descriptor: whoever opened it calls `close()` exactly
/// once. Every descriptor LinuxIO opens carries `O_CLOEXEC`/`SOCK_CLOEXEC`, so none leaks into
/// a child process. Calls interrupted by a signal (EINTR) are retried; every other failure is
/// thrown as an `Errno` (`.wouldBlock` on a non-blocking descriptor that has nothing to do).
public struct FileDescriptor: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The raw descriptor number.
    public let rawValue: CInt

    /// Wraps a raw descriptor number; the caller vouches that it is open.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// Standard input (descriptor 0).
    public static let standardInput = FileDescriptor(rawValue: 0)
    /// Standard output (descriptor 1).
    public static let standardOutput = FileDescriptor(rawValue: 1)
    /// Standard error (descriptor 2).
    public static let standardError = FileDescriptor(rawValue: 2)

    public var description: String { "fd \(rawValue)" }

    /// Opens `path` with `flags` (`O_RDONLY`, `O_RDWR | O_CREAT`, …) plus `O_CLOEXEC`.
    public static func open(_ path: String, _ flags: CInt, mode: mode_t = 0o644) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try Syscall.open(path, flags, mode))
    }

    /// A pipe whose both ends carry `O_CLOEXEC`.
    public static func pipe() throws(Errno) -> (read: FileDescriptor, write: FileDescriptor) {
        let (read, write) = try Syscall.pipe()
        return (FileDescriptor(rawValue: read), FileDescriptor(rawValue: write))
    }

    /// Closes the descriptor. EINTR is not retried: on Linux the descriptor is released anyway.
    public func close() throws(Errno) {
        try Syscall.close(rawValue)
    }

    /// `fstat(2)` of the open file: its type, size, device and inode.
    public func status() throws(Errno) -> stat {
        try Syscall.fstat(rawValue)
    }

    /// Reads at most `buffer.count` bytes; returns how many were read, 0 at end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try Syscall.read(rawValue, buffer)
    }

    /// Writes at most `bytes.count` bytes; returns how many were written (possibly fewer).
    /// On a socket prefer `send(_:)`, which cannot raise SIGPIPE.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try Syscall.write(rawValue, bytes)
    }

    /// Writes all of `bytes`, looping over short writes (for blocking descriptors).
    public func writeAll(_ bytes: some Sequence<UInt8>) throws(Errno) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let written = array.withUnsafeBytes { raw in
                Result { () throws(Errno) in try Syscall.write(rawValue, UnsafeRawBufferPointer(rebasing: raw[offset...])) }
            }
            offset += try written.get()
        }
    }

    /// Sends on a connected socket without ever raising SIGPIPE (a gone peer is `.brokenPipe`);
    /// returns how many bytes were sent.
    public func send(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try Syscall.send(rawValue, bytes)
    }

    /// Waits until a read would not block (data, end of file or an error), for at most
    /// `timeout` (forever when nil); false when the time ran out. A `poll(2)` waiter is woken
    /// only for the readiness it asked for, where a thread blocked in `read` on a Unix stream
    /// socket is also woken each time the peer reads what this side sent (write space) —
    /// a spurious context switch per request–reply exchange.
    public func waitUntilReadable(timeout: Duration? = nil) throws(Errno) -> Bool {
        try Syscall.pollReadable(rawValue, timeoutMilliseconds: timeout.map(Syscall.milliseconds) ?? -1)
    }

    /// Turns `O_NONBLOCK` on or off.
    public func setNonBlocking(_ nonBlocking: Bool = true) throws(Errno) {
        let flags = try Syscall.fileStatusFlags(rawValue)
        let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags { try Syscall.setFileStatusFlags(rawValue, wanted) }
    }

    /// Whether `O_NONBLOCK` is set.
    public var isNonBlocking: Bool {
        get throws(Errno) { try Syscall.fileStatusFlags(rawValue) & O_NONBLOCK != 0 }
    }
}
