import CLandlock
import Glibc
import LinuxIO
import TestSupport
import Testing

/// Against the real kernel's Landlock (ABI 7 on the build machine). Each restriction happens in
/// a forked child, as it cannot be undone.
@Suite struct LandlockTests {
    @Test func theKernelReportsAnABI() throws {
        #expect(try Landlock.abiVersion() >= 1)
    }

    @Test func writesOutsideTheAllowedDirectoryGetEACCESInsideSucceed() throws {
        let directory = try TemporaryDirectory(prefix: "landlock")
        let allowed = directory.path + "/allowed", outside = directory.path + "/outside"
        mkdir(allowed, 0o700)
        mkdir(outside, 0o700)
        let existing = outside + "/existing"
        #expect(creat(existing, 0o600) >= 0)
        #expect(failureInForkedChild {
            let abi = try Landlock.restrictModifications(toBeneath: [allowed])
            try ensure(abi >= 3, "ABI \(abi)")
            try ensure(try outcome { open(allowed + "/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600) } == 0, "create inside")
            try ensure(try outcome { mkdir(allowed + "/sub", 0o700) } == 0, "mkdir inside")
            try ensure(try outcome { rename(allowed + "/new", allowed + "/sub/moved") } == 0, "rename inside")
            try ensure(try outcome { unlink(allowed + "/sub/moved") } == 0, "unlink inside")

            try ensure(try outcome { open(outside + "/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600) } == EACCES, "create outside")
            try ensure(try outcome { open(existing, O_WRONLY | O_CLOEXEC) } == EACCES, "write an existing file outside")
            try ensure(try outcome { truncate(existing, 0) } == EACCES, "truncate outside")
            try ensure(try outcome { unlink(existing) } == EACCES, "unlink outside")
            try ensure(try outcome { mkdir(outside + "/sub", 0o700) } == EACCES, "mkdir outside")
            try ensure(try outcome { symlink("/etc/passwd", outside + "/link") } == EACCES, "symlink outside")
            try ensure(try outcome { mkdir("/tmp/landlock-escape-\(getpid())", 0o700) } == EACCES, "mkdir in /tmp")
            // Moving a file out of the allowed tree is a removal there and a creation outside.
            _ = try outcome { open(allowed + "/file", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600) }
            try ensure([EACCES, EXDEV].contains(try outcome { rename(allowed + "/file", outside + "/file") }), "move out")
            // Reading is not handled: it still works everywhere.
            try ensure(try outcome { open(existing, O_RDONLY | O_CLOEXEC) } == 0, "read outside")
            try ensure(try outcome { open("/etc/passwd", O_RDONLY | O_CLOEXEC) } == 0, "read /etc/passwd")
        } == nil)
    }

    @Test func aSecondLayerOnlyTightens() throws {
        let directory = try TemporaryDirectory(prefix: "landlock")
        let data = directory.path + "/data", inner = data + "/inner", other = directory.path + "/other"
        for path in [data, inner, other] { mkdir(path, 0o700) }
        #expect(failureInForkedChild {
            try Landlock.restrictModifications(toBeneath: [data])
            try ensure(try outcome { open(data + "/a", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600) } == 0, "layer 1: data")
            // The second layer allows `inner` and also `other`; the first layer still denies `other`.
            try Landlock.restrictModifications(toBeneath: [inner, other])
            try ensure(try outcome { open(data + "/b", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600) } == EACCES, "layer 2: data")
            try ensure(try outcome { open(data + "/a", O_WRONLY | O_CLOEXEC) } == EACCES, "layer 2: rewrite data/a")
            try ensure(try outcome { open(inner + "/c", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600) } == 0, "layer 2: inner")
            try ensure(try outcome { open(other + "/d", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600) } == EACCES, "layer 2: other")
        } == nil)
    }

    /// A thread that was running before the restriction is confined too (the signal broadcast),
    /// and so is one it starts afterwards.
    @Test func everyThreadScopeReachesThreadsAlreadyRunning() throws {
        let directory = try TemporaryDirectory(prefix: "landlock")
        let allowed = directory.path + "/allowed", outside = directory.path + "/outside"
        mkdir(allowed, 0o700)
        mkdir(outside, 0o700)
        #expect(failureInForkedChild {
            let worker = try WaitingThread()
            try Landlock.restrictModifications(toBeneath: [allowed], scope: .everyThread)
            let results = worker.run {
                [outcomeOrErrno { open(outside + "/from-worker", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600) },
                 outcomeOrErrno { open(allowed + "/from-worker", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600) }]
            }
            try ensure(results == [EACCES, 0], "the worker, running before: \(results)")
            let child = try WaitingThread()
            let childResults = child.run { [outcomeOrErrno { mkdir(outside + "/from-new-thread", 0o700) }] }
            try ensure(childResults == [EACCES], "a thread started after: \(childResults)")
        } == nil)
    }

    @Test func aThreadThatBlocksTheSignalIsReportedNotSkipped() {
        #expect(failureInForkedChild {
            let worker = try WaitingThread(blocking: Landlock.threadSignal)
            do {
                try Landlock.Ruleset(handling: .modifying(abi: try Landlock.abiVersion()))
                    .restrictEveryThread(timeout: .milliseconds(200))
                throw TestSupportError("a thread that blocks the signal was not reported")
            } catch LandlockError.failed(let operation, _, let errno) {
                try ensure(operation == "restrict thread \(worker.threadID)" && errno == Errno(rawValue: ETIMEDOUT),
                           "\(operation) \(errno)")
            }
        } == nil)
    }

    @Test func aMissingDirectoryIsAClearError() {
        #expect(failureInForkedChild {
            do {
                try Landlock.restrictModifications(toBeneath: ["/nonexistent/proctor"])
                throw TestSupportError("a missing directory was accepted")
            } catch LandlockError.failed(let operation, let path, let errno) {
                try ensure(operation == "open" && path == "/nonexistent/proctor" && errno == .noSuchFileOrDirectory, "\(operation) \(String(describing: path)) \(errno)")
            }
        } == nil)
    }
}

/// 0 when `call` succeeded (closing a descriptor it returned), else its errno.
private func outcome(_ call: () -> CInt) throws -> CInt {
    let result = call()
    if result < 0 { return errno }
    if result > 2 { close(result) }
    return 0
}

private func outcomeOrErrno(_ call: () -> CInt) -> CInt {
    (try? outcome(call)) ?? -1
}

/// A raw pthread (the forked child has no Foundation threads) that waits for work, runs it and
/// hands back the result: a thread that already exists when the process is restricted.
private final class WaitingThread: @unchecked Sendable {
    private var work: (() -> [CInt])?
    private var result: [CInt] = []
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private(set) var threadID: pid_t = 0
    private let blockedSignal: CInt?

    init(blocking blockedSignal: CInt? = nil) throws {
        self.blockedSignal = blockedSignal
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { context in
            Unmanaged<WaitingThread>.fromOpaque(context!).takeUnretainedValue().serve()
            return nil
        }, Unmanaged.passRetained(self).toOpaque())
        try ensure(started == 0, "pthread_create: \(started)")
        pthread_detach(thread)
        pthread_mutex_lock(&mutex)
        while threadID == 0 { pthread_cond_wait(&condition, &mutex) }
        pthread_mutex_unlock(&mutex)
    }

    private func serve() {
        if let blockedSignal {
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, blockedSignal)
            pthread_sigmask(SIG_BLOCK, &set, nil)
        }
        pthread_mutex_lock(&mutex)
        threadID = clandlock_thread_id()
        pthread_cond_broadcast(&condition)
        while true {
            while work == nil { pthread_cond_wait(&condition, &mutex) }
            result = work!()
            work = nil
            pthread_cond_broadcast(&condition)
        }
    }

    func run(_ body: @escaping () -> [CInt]) -> [CInt] {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        work = body
        pthread_cond_broadcast(&condition)
        while work != nil { pthread_cond_wait(&condition, &mutex) }
        return result
    }
}
