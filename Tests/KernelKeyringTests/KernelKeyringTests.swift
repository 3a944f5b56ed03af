import Glibc
import KernelKeyring
import LinuxIO
import Testing

/// Against the real kernel keyring. Each test runs in a forked child that first joins a new
/// anonymous session keyring, so the keys it adds are visible to nothing else and vanish with it.
@Suite struct KernelKeyringTests {
    @Test func addReadAndRevokeInTheSessionKeyring() {
        expectInChild {
            _ = try KernelKeyring.joinNewSessionKeyring()
            let secret: [UInt8] = Array(0..<32)
            let key = try secret.withUnsafeBytes {
                try KernelKeyring.add("proctor:test:app", payload: $0, to: .session, expiresAfterSeconds: 3600)
            }
            try check(try KernelKeyring.find("proctor:test:app", in: .session) == key, "find returns the added key")
            try check(try KernelKeyring.withPayload(of: key) { Array($0) } == secret, "the payload reads back")
            try check(try KernelKeyring.find("proctor:test:other", in: .session) == nil, "an unknown name is nil")
            let line = try procKeysLine(key)
            // /proc/keys: serial flags usage timeout perm uid gid type description
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            try check(fields[3].hasSuffix("m") || fields[3].hasSuffix("h"), "an expiry is set: \(line)")
            try check(fields[4] == "3f010100", "possessor-only permissions: \(line)")

            try KernelKeyring.revoke(key)
            do {
                _ = try KernelKeyring.withPayload(of: key) { Array($0) }
                throw Failure("a revoked key was read")
            } catch let error as KernelKeyringError {
                try check(error.errno.rawValue == EKEYREVOKED && error.keyIsGone, "revoked: \(error)")
            }
            try check(try KernelKeyring.find("proctor:test:app", in: .session) == nil, "a revoked key is not found")
        }
    }

    @Test func aKeyExpiresAtItsTimeout() {
        expectInChild {
            _ = try KernelKeyring.joinNewSessionKeyring()
            let key = try [UInt8](repeating: 7, count: 32).withUnsafeBytes {
                try KernelKeyring.add("proctor:test:expiring", payload: $0, to: .session, expiresAfterSeconds: 1)
            }
            try check(try KernelKeyring.withPayload(of: key) { $0.count } == 32, "readable before its expiry")
            // The kernel expires keys on a one-second clock: wait for it, up to five seconds.
            var expired: KernelKeyringError?
            for _ in 0..<50 where expired == nil {
                usleep(100_000)
                do throws(KernelKeyringError) { _ = try KernelKeyring.withPayload(of: key) { $0.count } } catch { expired = error }
            }
            try check(expired?.errno.rawValue == EKEYEXPIRED, "expired: \(String(describing: expired))")
            try check(try KernelKeyring.find("proctor:test:expiring", in: .session) == nil, "an expired key is not found")
        }
    }

    @Test func anotherSessionCannotFindTheKey() {
        expectInChild {
            _ = try KernelKeyring.joinNewSessionKeyring()
            try [UInt8](repeating: 1, count: 32).withUnsafeBytes {
                _ = try KernelKeyring.add("proctor:test:private", payload: $0, to: .session, expiresAfterSeconds: 60)
            }
            _ = try KernelKeyring.joinNewSessionKeyring()
            try check(try KernelKeyring.find("proctor:test:private", in: .session) == nil, "invisible from a new session")
        }
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func check(_ condition: Bool, _ what: String) throws {
    if !condition { throw Failure(what) }
}

/// The /proc/keys line of `key` (only keys the process may view are listed).
func procKeysLine(_ key: KernelKey) throws -> String {
    guard let file = fopen("/proc/keys", "r") else { throw Failure("cannot open /proc/keys") }
    defer { fclose(file) }
    var line: UnsafeMutablePointer<CChar>? = nil
    var capacity = 0
    defer { free(line) }
    let serial = String(key.serial, radix: 16)
    while getline(&line, &capacity, file) > 0, let line {
        let text = String(cString: line)
        if text.split(separator: " ").first.map(String.init) == String(repeating: "0", count: max(0, 8 - serial.count)) + serial {
            return text
        }
    }
    throw Failure("\(key) is not in /proc/keys")
}

/// Runs `body` in a forked child (keyring changes stay in it) and records its failure, if any,
/// as an issue of the calling test.
func expectInChild(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
    var fds: [CInt] = [0, 0]
    guard pipe(&fds) == 0 else { Issue.record("pipe: \(Errno.current)"); return }
    let child = fork()
    if child == 0 {
        close(fds[0])
        var message = ""
        do { try body() } catch { message = "\(error)" }
        _ = message.withCString { write(fds[1], $0, strlen($0)) }
        _exit(message.isEmpty ? 0 : 1)
    }
    close(fds[1])
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(fds[0], &buffer, buffer.count)
        if count <= 0 { break }
        output += buffer[..<count]
    }
    close(fds[0])
    var status: CInt = 0
    waitpid(child, &status, 0)
    let message = String(decoding: output, as: UTF8.self)
    #expect(status == 0 && message.isEmpty, "\(message)", sourceLocation: sourceLocation)
}
