import Foundation
import Glibc
@testable import LinuxIO
import Synchronization

/// A value shared between the loop's thread and the test's thread.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func update<Result: Sendable>(_ body: (inout Value) -> Result) -> Result { storage.withLock { body(&$0) } }
}

/// Waits up to `timeout` for `condition`, polling every millisecond; returns whether it held.
func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

/// An event loop running on a thread of its own for the length of a test.
final class LoopThread: Sendable {
    let loop: EventLoop
    private let finished = DispatchSemaphore(value: 0)
    let failure = Shared<Errno?>(nil)

    /// Creates the loop; `setUp` runs on the test's thread before the loop's thread starts.
    init(setUp: (EventLoop) throws -> Void = { _ in }) throws {
        loop = try EventLoop()
        try setUp(loop)
        let loop = self.loop, finished = self.finished, failure = self.failure
        Thread.detachNewThread {
            do throws(Errno) { try loop.run() } catch { failure.update { $0 = error } }
            finished.signal()
        }
    }

    /// Runs `body` on the loop's thread and waits for its result.
    func sync<Result: Sendable>(_ body: @Sendable @escaping () -> Result) -> Result {
        let result = Shared<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            result.update { $0 = body() }
            done.signal()
        }
        done.wait()
        return result.value!
    }

    /// Stops the loop and waits for its thread to leave `run()`.
    func stop() {
        let loop = self.loop
        loop.execute { loop.stop() }
        finished.wait()
    }
}

/// A blocking client socket with a receive timeout, so a broken test fails instead of hanging.
struct Client {
    let descriptor: FileDescriptor

    init(path: String) throws {
        descriptor = try UnixSocket.connect(path: path)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    init(descriptor: FileDescriptor) throws {
        self.descriptor = descriptor
        try descriptor.setNonBlocking(false)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) throws { try descriptor.writeAll(bytes) }
    func send(_ text: String) throws { try descriptor.writeAll(Array(text.utf8)) }

    /// Reads exactly `count` bytes, or fewer if the peer closes first.
    func receive(count: Int) throws -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while received.count < count {
            let wanted = min(chunk.count, count - received.count)
            let read = try chunk.withUnsafeMutableBytes { try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted])) }
            if read == 0 { break }
            received += chunk[..<read]
        }
        return received
    }

    /// Reads until end of file (the server closed); returns everything read.
    func receiveUntilClosed() throws -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let read = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            if read == 0 { return received }
            received += chunk[..<read]
        }
    }

    func close() { try? descriptor.close() }
}

/// Consumes every complete NUL-terminated message in `buffer`, calling `message` for each;
/// returns how many bytes that was (the framing Varlink uses).
func consumeMessages(_ buffer: UnsafeRawBufferPointer, _ message: (UnsafeRawBufferPointer) -> Void) -> Int {
    var start = 0
    while let end = buffer[start...].firstIndex(of: 0) {
        message(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
        start = end + 1
    }
    return start
}

/// Carries a loop-thread object to closures that run on the loop's thread; the test only
/// touches it there.
final class LoopBound<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The events `loop`'s epoll instance watches on `descriptor`, read from /proc/self/fdinfo.
func watchedEvents(_ loop: EventLoop, _ descriptor: FileDescriptor) throws -> UInt32? {
    try watchedEvents(onEpoll: loop.epoll, descriptor)
}

/// The events the epoll instance `epoll` watches on `descriptor`, read from /proc/self/fdinfo.
func watchedEvents(onEpoll epoll: FileDescriptor, _ descriptor: FileDescriptor) throws -> UInt32? {
    let info = try String(contentsOfFile: "/proc/self/fdinfo/\(epoll.rawValue)", encoding: .utf8)
    for line in info.split(separator: "\n") where line.hasPrefix("tfd:") {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 4, Int32(fields[1]) == descriptor.rawValue else { continue }
        return UInt32(fields[3], radix: 16)
    }
    return nil
}

/// In a forked child: closes every inherited descriptor above 2 except `keep`, so the child does
/// not hold other tests' sockets open (which would hide their EOFs or keep stale sockets alive).
func closeInheritedDescriptors(except keep: Set<CInt> = []) {
    guard let directory = opendir("/proc/self/fd") else { return }
    let own = dirfd(directory)
    var inherited: [CInt] = []
    inherited.reserveCapacity(256)
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if let fd = CInt(name), fd > 2, fd != own, !keep.contains(fd) { inherited.append(fd) }
    }
    closedir(directory)
    for fd in inherited { close(fd) }
}

/// Waits up to five seconds for the forked `child`; kills it if it is still running then.
/// - Returns: its raw wait status, or nil when it had to be killed.
func waitForForkedChild(_ child: pid_t) -> CInt? {
    var status: CInt = 0
    var waited: pid_t = 0
    for _ in 0..<5000 where waited == 0 {
        waited = waitpid(child, &status, WNOHANG)
        if waited == 0 { usleep(1000) }
    }
    guard waited == 0 else { return waited == child ? status : nil }
    kill(child, SIGKILL)
    waitpid(child, &status, 0)
    return nil
}

/// Notes "released" when it is released, after what the code holding it noted: a handler
/// that drops itself must run to its end first.
final class ReleaseWitness {
    let events: Shared<[String]>
    init(_ events: Shared<[String]>) { self.events = events }
    func note(_ event: String) { events.update { $0.append(event) } }
    deinit { events.update { $0.append("released") } }
}
