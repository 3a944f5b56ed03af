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
