import Glibc
@testable import LinuxIO
import Testing
import TestSupport

@Suite struct UnixSocketTests {
    @Test func listenSetsModeNonBlockingAndCloseOnExec() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/agent.sock"
        let socket = try UnixSocket.listen(path: path, mode: 0o660)
        defer { try? socket.close() }
        var status = stat()
        #expect(lstat(path, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFSOCK)
        #expect(status.st_mode & 0o777 == 0o660)
        #expect(try socket.isNonBlocking)
        #expect(fcntl(socket.rawValue, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func groupIsAppliedWhenItExistsAndSkippedWhenNot() throws {
        let directory = try TemporaryDirectory()
        let withGroup = directory.path + "/admin.sock"
        let socket = try UnixSocket.listen(path: withGroup, mode: 0o660, group: "daemon")
        defer { try? socket.close() }
        var status = stat()
        #expect(lstat(withGroup, &status) == 0)
        #expect(status.st_gid == getgrnam("daemon").pointee.gr_gid)

        let withoutGroup = directory.path + "/other.sock"
        let other = try UnixSocket.listen(path: withoutGroup, mode: 0o600, group: "no-such-group-proctor")
        defer { try? other.close() }
        #expect(lstat(withoutGroup, &status) == 0)
        #expect(status.st_gid == getegid())
    }

    @Test func staleSocketFromACrashedRunIsReplaced() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/stale.sock"
        // A crashed run leaves its socket file behind with nobody listening.
        let crashed = try UnixSocket.listen(path: path, mode: 0o666)
        try crashed.close()
        #expect(access(path, F_OK) == 0)
        #expect(throws: UnixSocketError.notListening(path: path, errno: .connectionRefused)) {
            _ = try UnixSocket.connect(path: path)
        }

        let socket = try UnixSocket.listen(path: path, mode: 0o666)
        defer { try? socket.close() }
        let client = try UnixSocket.connect(path: path)
        try client.close()
    }

    @Test func liveSocketIsRefusedAndLeftWorking() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/live.sock"
        let socket = try UnixSocket.listen(path: path, mode: 0o666)
        defer { try? socket.close() }
        #expect(throws: UnixSocketError.alreadyListening(path: path)) {
            _ = try UnixSocket.listen(path: path, mode: 0o666)
        }
        #expect(UnixSocketError.alreadyListening(path: path).description
            == "another process is already listening on \(path); refusing to replace its socket")
        let client = try UnixSocket.connect(path: path)
        try client.close()
    }

    @Test func aFileThatIsNotASocketIsLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/precious"
        let file = try FileDescriptor.open(path, O_WRONLY | O_CREAT)
        try file.close()
        #expect(throws: UnixSocketError.notASocket(path: path)) {
            _ = try UnixSocket.listen(path: path, mode: 0o666)
        }
        #expect(access(path, F_OK) == 0)
    }

    @Test func overlongPathIsRefusedWithItsLength() {
        let path = "/tmp/" + String(repeating: "x", count: 200)
        #expect(throws: UnixSocketError.pathTooLong(path: path, maximumBytes: 107)) {
            _ = try UnixSocket.listen(path: path, mode: 0o666)
        }
    }

    /// A path is its bytes and a terminating NUL, an abstract name a leading NUL and its bytes:
    /// both up to 107 bytes; an empty one, one holding a NUL or a longer one is no address.
    @Test func unixSocketAddressesHoldAPathOrAnAbstractName() {
        let header = MemoryLayout.offset(of: \sockaddr_un.sun_path)!
        let longest = String(repeating: "p", count: 107)
        #expect(UnixSocketAddress(path: longest)?.length == socklen_t(header + 108))
        #expect(UnixSocketAddress(abstractName: longest)?.length == socklen_t(header + 108))
        for refused in ["", "a\u{0}b", longest + "p"] {
            #expect(UnixSocketAddress(path: refused) == nil)
            #expect(UnixSocketAddress(abstractName: refused) == nil)
        }
        let bytes = UnixSocketAddress(abstractName: "name")!.withSocketAddress { address, length in
            Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
        }
        #expect(Array(bytes[header...]) == [0] + Array("name".utf8))
    }

    @Test func connectingToNothingIsNotListening() {
        let path = "/tmp/linuxio-test-does-not-exist.sock"
        #expect(throws: UnixSocketError.notListening(path: path, errno: .noSuchFileOrDirectory)) {
            _ = try UnixSocket.connect(path: path)
        }
        #expect(UnixSocketError.notListening(path: path, errno: .noSuchFileOrDirectory).description
            == "nothing is listening at \(path): No such file or directory (ENOENT)")
    }

    @Test func acceptedSocketsAreNonBlockingAndCloseOnExec() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/accept.sock"
        let socket = try UnixSocket.listen(path: path, mode: 0o666)
        defer { try? socket.close() }
        #expect(throws: Errno.wouldBlock) { _ = try UnixSocket.accept(on: socket) }
        let client = try UnixSocket.connect(path: path)
        defer { try? client.close() }
        let accepted = try UnixSocket.accept(on: socket)
        defer { try? accepted.close() }
        #expect(try accepted.isNonBlocking)
        #expect(fcntl(accepted.rawValue, F_GETFD) & FD_CLOEXEC != 0)
    }
}

@Suite struct LockFileTests {
    @Test func secondAcquireFailsNamingTheHolderAndSucceedsAfterRelease() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/proctord.lock"
        var first: LockFile? = try LockFile.acquire(path: path)
        #expect(first?.path == path)
        // flock locks belong to the open file description: a second open conflicts even here.
        #expect(throws: LockFileError.alreadyLocked(path: path, holderPID: getpid())) {
            _ = try LockFile.acquire(path: path)
        }
        #expect(LockFileError.alreadyLocked(path: path, holderPID: 42).description
            == "\(path) is locked by process 42; is another instance running on this directory?")
        first = nil
        let second = try LockFile.acquire(path: path)
        _ = second
    }

    @Test func unwritableDirectoryIsASystemError() {
        #expect(throws: LockFileError.system(operation: "open", path: "/proc/proctor.lock", errno: .noSuchFileOrDirectory)) {
            _ = try LockFile.acquire(path: "/proc/proctor.lock")
        }
    }
}

@Suite struct IdentityTests {
    @Test func peerCredentialsAreThisProcess() throws {
        let (first, second) = try UnixSocket.pair()
        defer { try? first.close(); try? second.close() }
        let credentials = try PeerCredentials.of(second)
        #expect(credentials == PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
    }

    @Test func executablePathIsTheResolvedProcExe() throws {
        var buffer = [CChar](repeating: 0, count: 4097)
        let length = readlink("/proc/self/exe", &buffer, 4096)
        let expected = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #expect(try ProcessIdentity.executablePath(ofPID: getpid()) == expected)
        #expect(throws: Errno.noSuchFileOrDirectory) { _ = try ProcessIdentity.executablePath(ofPID: 999_999_999) }
    }

    @Test func supplementaryGroupsMatchGetgroups() throws {
        var groups = [gid_t](repeating: 0, count: 256)
        let count = getgroups(CInt(groups.count), &groups)
        #expect(try ProcessIdentity.supplementaryGroups(ofPID: getpid()).sorted() == groups[..<Int(count)].sorted())
    }

    @Test func userAndGroupDatabases() throws {
        #expect(try UserDatabase.userName(forUID: 0) == "root")
        #expect(try UserDatabase.userName(forUID: 4_000_000_000) == nil)
        #expect(try UserDatabase.groupID(named: "root") == 0)
        #expect(try UserDatabase.groupID(named: "no-such-group-proctor") == nil)
    }
}
