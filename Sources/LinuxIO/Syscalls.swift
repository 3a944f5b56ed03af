// Every raw libc call of LinuxIO goes through this file, so the rest of the layer speaks in
// types (`FileDescriptor`, `Errno`) and the calls can be read, audited and faulted in one place.
import CLinux
import Glibc

/// Runs `body` (a call that returns -1 and sets `errno` on failure) again while it fails with
/// EINTR, and turns any other failure into an `Errno`.
///
/// Never use it for `close(2)`: on Linux the descriptor is gone even when close reports EINTR,
/// and a retry could close a descriptor another thread has just been given.
@inline(__always)
func retryingOnInterrupt<Result: FixedWidthInteger>(_ body: () -> Result) throws(Errno) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code != EINTR { throw Errno(rawValue: code) }
    }
}

/// The thin typed wrappers over libc; each returns the call's result or throws its `errno`.
enum Syscall {
    // MARK: descriptors

    static func open(_ path: String, _ flags: CInt, _ mode: mode_t = 0) throws(Errno) -> CInt {
        try retryingOnInterrupt { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    static func close(_ fd: CInt) throws(Errno) {
        if Glibc.close(fd) == -1, errno != EINTR { throw Errno(rawValue: errno) }
    }

    static func read(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    static func write(_ fd: CInt, _ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { Glibc.write(fd, buffer.baseAddress, buffer.count) }
    }

    /// send(2) with MSG_NOSIGNAL: a peer that went away yields EPIPE instead of killing the
    /// process with SIGPIPE.
    static func send(_ fd: CInt, _ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { clinux_send(fd, buffer.baseAddress, buffer.count, CInt(MSG_NOSIGNAL)) }
    }

    static func startWriteback(_ fd: CInt, offset: Int64, count: Int64) throws(Errno) {
        _ = try retryingOnInterrupt { clinux_start_writeback(fd, offset, count) }
    }

    static func fileStatusFlags(_ fd: CInt) throws(Errno) -> CInt {
        try retryingOnInterrupt { fcntl(fd, F_GETFL) }
    }

    static func setFileStatusFlags(_ fd: CInt, _ flags: CInt) throws(Errno) {
        _ = try retryingOnInterrupt { fcntl(fd, F_SETFL, flags) }
    }

    static func ftruncate(_ fd: CInt, _ length: off_t) throws(Errno) {
        _ = try retryingOnInterrupt { Glibc.ftruncate(fd, length) }
    }

    static func flock(_ fd: CInt, _ operation: CInt) throws(Errno) {
        _ = try retryingOnInterrupt { clinux_flock(fd, operation) }
    }

    static func pipe() throws(Errno) -> (read: CInt, write: CInt) {
        var fds: [CInt] = [-1, -1]
        _ = try retryingOnInterrupt { clinux_pipe_cloexec(&fds) }
        return (fds[0], fds[1])
    }

    // MARK: files and names

    static func lstat(_ path: String) throws(Errno) -> stat {
        var status = stat()
        _ = try retryingOnInterrupt { Glibc.lstat(path, &status) }
        return status
    }

    /// stat(2): the status of `path`, following symbolic links.
    static func status(_ path: String) throws(Errno) -> stat {
        var status = stat()
        _ = try retryingOnInterrupt { stat(path, &status) }
        return status
    }

    static func directoryEntryNames(_ path: String) throws(Errno) -> [String] {
        guard let directory = opendir(path) else { throw Errno.current }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func unlink(_ path: String) throws(Errno) {
        _ = try retryingOnInterrupt { Glibc.unlink(path) }
    }

    static func chmod(_ path: String, _ mode: mode_t) throws(Errno) {
        _ = try retryingOnInterrupt { Glibc.chmod(path, mode) }
    }

    /// Changes only the group of `path` (the owner stays as it is).
    static func chgrp(_ path: String, _ group: gid_t) throws(Errno) {
        _ = try retryingOnInterrupt { Glibc.chown(path, uid_t.max, group) }
    }

    static func readlink(_ path: String) throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = try retryingOnInterrupt { Glibc.readlink(path, &buffer, buffer.count - 1) }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The user name of `uid` from the user database, or nil when there is none.
    static func userName(forUID uid: uid_t) throws(Errno) -> String? {
        try lookUp(passwd(), maxBuffer: 1 << 20, { getpwuid_r(uid, &$0, &$1, $1.count, &$2) },
                   { $0.pw_name.map { String(cString: $0) } })
    }

    /// The group id named `name` in the group database, or nil when there is none.
    static func groupID(named name: String) throws(Errno) -> gid_t? {
        // A group's entry lists its members: it may need a far larger buffer than a user's.
        try lookUp(group(), maxBuffer: 1 << 24, { getgrnam_r(name, &$0, &$1, $1.count, &$2) }, { $0.gr_gid })
    }

    /// Reads one entry of the user or group database through a `get…_r` function (`call`
    /// fills the entry, whose strings point into the buffer, and the found pointer), growing
    /// the buffer while it is too small, up to `maxBuffer`, and retrying on EINTR. `value` is
    /// read from the entry while the buffer lives; nil when there is no entry.
    private static func lookUp<Entry, Value>(
        _ entry: Entry, maxBuffer: Int,
        _ call: (inout Entry, inout [CChar], inout UnsafeMutablePointer<Entry>?) -> Int32,
        _ value: (Entry) -> Value?
    ) throws(Errno) -> Value? {
        var entry = entry
        var found: UnsafeMutablePointer<Entry>? = nil
        var size = 1024
        while true {
            var buffer = [CChar](repeating: 0, count: size)
            let code = call(&entry, &buffer, &found)
            if code == ERANGE, size < maxBuffer { size *= 4; continue }
            if code == EINTR { continue }
            if code != 0 { throw Errno(rawValue: code) }
            return found == nil ? nil : value(entry)
        }
    }

    // MARK: sockets

    static func unixStreamSocket(nonBlocking: Bool) throws(Errno) -> CInt {
        var type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= CInt(SOCK_NONBLOCK.rawValue) }
        return try retryingOnInterrupt { socket(AF_UNIX, type, 0) }
    }

    static func socketPair() throws(Errno) -> (CInt, CInt) {
        var fds: [CInt] = [-1, -1]
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue)
        _ = try retryingOnInterrupt { socketpair(AF_UNIX, type, 0, &fds) }
        return (fds[0], fds[1])
    }

    /// Calls `body` with the address of `path`, or fails with EINVAL (-1 and `errno`) when it
    /// is not one (empty, with a NUL, or too long: callers check the length first).
    private static func withUnixAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> CInt) -> CInt {
        guard let address = UnixSocketAddress(path: path) else {
            errno = EINVAL
            return -1
        }
        return address.withSocketAddress(body)
    }

    static func bind(_ fd: CInt, unixPath path: String) throws(Errno) {
        _ = try retryingOnInterrupt { withUnixAddress(path) { Glibc.bind(fd, $0, $1) } }
    }

    /// connect(2); EINTR is not retried by calling connect again (that would report EALREADY)
    /// but by waiting for the connection the kernel keeps establishing.
    static func connect(_ fd: CInt, unixPath path: String) throws(Errno) {
        if withUnixAddress(path, { Glibc.connect(fd, $0, $1) }) == 0 { return }
        let code = errno
        guard code == EINTR else { throw Errno(rawValue: code) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        _ = try retryingOnInterrupt { poll(&descriptor, 1, -1) }
        var failure: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        _ = try retryingOnInterrupt { getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length) }
        if failure != 0 { throw Errno(rawValue: failure) }
    }

    static func listen(_ fd: CInt, backlog: CInt) throws(Errno) {
        _ = try retryingOnInterrupt { Glibc.listen(fd, backlog) }
    }

    static func acceptNonBlocking(_ fd: CInt) throws(Errno) -> CInt {
        try retryingOnInterrupt { clinux_accept_nonblocking(fd) }
    }

    static func peerCredentials(_ fd: CInt) throws(Errno) -> (pid: pid_t, uid: uid_t, gid: gid_t) {
        var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
        _ = try retryingOnInterrupt { clinux_peer_credentials(fd, &pid, &uid, &gid) }
        return (pid, uid, gid)
    }

    /// poll(2) for `POLLIN` on one descriptor; false on timeout. EINTR restarts the wait.
    static func pollReadable(_ fd: CInt, timeoutMilliseconds: CInt) throws(Errno) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return try retryingOnInterrupt { poll(&descriptor, 1, timeoutMilliseconds) } > 0
    }

    /// `duration` in whole milliseconds for poll(2): rounded up, 0 when not positive, at most `CInt.max`.
    static func milliseconds(_ duration: Duration) -> CInt {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64(CInt.max) / 1_000 else { return CInt.max }
        return CInt(seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    static func setSocketOption(_ fd: CInt, _ option: CInt, on: Bool) throws(Errno) {
        _ = try retryingOnInterrupt { clinux_set_socket_option(fd, option, on ? 1 : 0) }
    }

    static func peerPidFD(_ fd: CInt) throws(Errno) -> CInt {
        try retryingOnInterrupt { clinux_peer_pidfd(fd) }
    }

    /// recvmsg(2) collecting the sender's SCM_CREDENTIALS and SCM_PIDFD; descriptors passed
    /// with SCM_RIGHTS are closed.
    static func receiveWithSender(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer) throws(Errno)
        -> (count: Int, sender: clinux_sender) {
        var sender = clinux_sender()
        let count = try retryingOnInterrupt { clinux_receive_with_sender(fd, buffer.baseAddress, buffer.count, &sender) }
        return (count, sender)
    }

    // MARK: processes

    static func pidFDOpen(_ pid: pid_t) throws(Errno) -> CInt {
        try retryingOnInterrupt { clinux_pidfd_open(pid) }
    }

    static func pidFDHasExited(_ pidfd: CInt) throws(Errno) -> Bool {
        try retryingOnInterrupt { clinux_pidfd_has_exited(pidfd) } == 1
    }

    static func fstat(_ fd: CInt) throws(Errno) -> stat {
        var status = stat()
        _ = try retryingOnInterrupt { Glibc.fstat(fd, &status) }
        return status
    }

    // MARK: the event loop's kernel objects

    static func epollCreate() throws(Errno) -> CInt {
        try retryingOnInterrupt { epoll_create1(CInt(EPOLL_CLOEXEC)) }
    }

    static func epollControl(_ epoll: CInt, _ operation: CInt, _ fd: CInt, events: UInt32, data: UInt64) throws(Errno) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = data
        _ = try retryingOnInterrupt { epoll_ctl(epoll, operation, fd, &event) }
    }

    /// epoll_wait(2); an interruption by a signal returns 0 events (the caller loops anyway).
    static func epollWait(_ epoll: CInt, _ events: UnsafeMutablePointer<epoll_event>, capacity: CInt,
                          timeoutMilliseconds: CInt) throws(Errno) -> Int {
        let count = clinux_epoll_wait(epoll, events, capacity, timeoutMilliseconds)
        if count >= 0 { return Int(count) }
        let code = errno
        if code == EINTR { return 0 }
        throw Errno(rawValue: code)
    }

    /// epoll_wait(2) that does not wait: the events ready now.
    static func epollWaitReady(_ epoll: CInt, _ events: UnsafeMutablePointer<epoll_event>, capacity: CInt) throws(Errno) -> Int {
        Int(try retryingOnInterrupt { clinux_epoll_wait(epoll, events, capacity, 0) })
    }

    static func eventFD() throws(Errno) -> CInt {
        try retryingOnInterrupt { eventfd(0, CInt(EFD_CLOEXEC) | CInt(EFD_NONBLOCK)) }
    }

    /// Blocks `signals` for the calling thread (and the threads it starts later) and returns a
    /// signalfd for them; `existing` (or -1) is updated in place when given.
    static func signalFD(existing: CInt, blocking signals: [CInt]) throws(Errno) -> CInt {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        let blocked = pthread_sigmask(SIG_BLOCK, &mask, nil)
        if blocked != 0 { throw Errno(rawValue: blocked) }
        return try retryingOnInterrupt { signalfd(existing, &mask, CInt(SFD_CLOEXEC) | CInt(SFD_NONBLOCK)) }
    }

    /// The monotonic clock in nanoseconds (never goes back, does not count suspend).
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    static func processID() -> pid_t { getpid() }
}
