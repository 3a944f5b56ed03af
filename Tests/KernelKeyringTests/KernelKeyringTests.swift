import Glibc
import KernelKeyring
import LinuxIO
import TestSupport
import Testing

/// Against the real kernel keyring. Each test runs in a forked child that first joins a new
/// anonymous session keyring, so the keys it adds are visible to nothing else and vanish with it.
@Suite struct KernelKeyringTests {
    @Test func addReadAndRevokeInTheSessionKeyring() {
        #expect(failureInForkedChild {
            _ = try KernelKeyring.joinNewSessionKeyring()
            let secret: [UInt8] = Array(0..<32)
            let key = try secret.withUnsafeBytes {
                try KernelKeyring.add("proctor:test:app", payload: $0, to: .session, expiresAfterSeconds: 3600)
            }
            try ensure(try KernelKeyring.find("proctor:test:app", in: .session) == key, "find returns the added key")
            try ensure(try KernelKeyring.withPayload(of: key) { Array($0) } == secret, "the payload reads back")
            try ensure(try KernelKeyring.find("proctor:test:other", in: .session) == nil, "an unknown name is nil")
            let line = try procKeysLine(key)
            // /proc/keys: serial flags usage timeout perm uid gid type description
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            try ensure(fields[3].hasSuffix("m") || fields[3].hasSuffix("h"), "an expiry is set: \(line)")
            try ensure(fields[4] == "3f010000", "possessor-only permissions: \(line)")

            try KernelKeyring.revoke(key)
            do {
                _ = try KernelKeyring.withPayload(of: key) { Array($0) }
                throw TestSupportError("a revoked key was read")
            } catch let error as KernelKeyringError {
                try ensure(error.errno.rawValue == EKEYREVOKED && error.keyIsGone, "revoked: \(error)")
            }
            try ensure(try KernelKeyring.find("proctor:test:app", in: .session) == nil, "a revoked key is not found")
        } == nil)
    }

    @Test func aKeyExpiresAtItsTimeout() {
        #expect(failureInForkedChild {
            _ = try KernelKeyring.joinNewSessionKeyring()
            let key = try [UInt8](repeating: 7, count: 32).withUnsafeBytes {
                try KernelKeyring.add("proctor:test:expiring", payload: $0, to: .session, expiresAfterSeconds: 1)
            }
            try ensure(try KernelKeyring.withPayload(of: key) { $0.count } == 32, "readable before its expiry")
            // The kernel expires keys on a one-second clock: wait for it, up to five seconds.
            var expired: KernelKeyringError?
            for _ in 0..<50 where expired == nil {
                usleep(100_000)
                do throws(KernelKeyringError) { _ = try KernelKeyring.withPayload(of: key) { $0.count } } catch { expired = error }
            }
            try ensure(expired?.errno.rawValue == EKEYEXPIRED, "expired: \(String(describing: expired))")
            try ensure(try KernelKeyring.find("proctor:test:expiring", in: .session) == nil, "an expired key is not found")
        } == nil)
    }

    @Test func anotherSessionCannotFindTheKey() {
        #expect(failureInForkedChild {
            _ = try KernelKeyring.joinNewSessionKeyring()
            try [UInt8](repeating: 1, count: 32).withUnsafeBytes {
                _ = try KernelKeyring.add("proctor:test:private", payload: $0, to: .session, expiresAfterSeconds: 60)
            }
            _ = try KernelKeyring.joinNewSessionKeyring()
            try ensure(try KernelKeyring.find("proctor:test:private", in: .session) == nil, "invisible from a new session")
        } == nil)
    }
}

/// The /proc/keys line of `key` (only keys the process may view are listed).
func procKeysLine(_ key: KernelKey) throws -> String {
    guard let file = fopen("/proc/keys", "r") else { throw TestSupportError("cannot open /proc/keys") }
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
    throw TestSupportError("\(key) is not in /proc/keys")
}
