import CSQLite
import Foundation
import Glibc
import TestSupport
@testable import ProctorStore

/// Runs a command (mount, umount, sqlite3) and returns its exit status.
@discardableResult
func runCommand(_ executable: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// A raw SQLite connection for building databases by hand (old schemas, foreign writers),
/// independent of the store's own connection code.
final class RawDatabase {
    private var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open(path, &handle) == SQLITE_OK else { throw RawDatabaseError(message: "open \(path)") }
    }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            defer { sqlite3_free(message) }
            throw RawDatabaseError(message: message.map { String(cString: $0) } ?? "exec failed")
        }
    }

    func integer(_ sql: String) throws -> Int64 {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { throw RawDatabaseError(message: sql) }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw RawDatabaseError(message: "no row: \(sql)") }
        return sqlite3_column_int64(statement, 0)
    }

    /// Closes without committing: an open transaction is rolled back.
    func close() {
        sqlite3_close(handle)
        handle = nil
    }

    deinit { close() }
}

struct RawDatabaseError: Error { let message: String }

/// A small policy text whose version is `version`, padded to roughly `padding` bytes.
func policyText(_ version: String, padding: Int = 0) -> String {
    #"{"apps":{},"pad":""# + String(repeating: "x", count: padding) + #"","schema":1,"version":""# + version + #""}"#
}

extension StateStore {
    /// Applies `version` with no CAS guard, at a time derived from the version for readable tests.
    @discardableResult
    func applyForTest(_ version: String, expected: String? = nil, padding: Int = 0, at time: UnixMilliseconds = 1_000) throws(StoreError) -> BundleRecord {
        try apply(version: version, canonicalJSON: policyText(version, padding: padding), expectedVersion: expected, at: time, byUID: 0)
    }
}

/// A fresh state directory for one test, removed with everything in it when the fixture goes.
/// Suites keep one as a stored property: Swift Testing makes a suite value per test, so each
/// test has a directory of its own for as long as it runs.
struct StoreDirectory {
    private let temporary: TemporaryDirectory

    init() throws { temporary = try TemporaryDirectory(prefix: "proctor-store-test") }

    var path: String { temporary.path }
    /// The path of the store's database file.
    var databasePath: String { temporary.appending(StateStore.databaseFileName).path }

    /// The URL of `name` inside the directory.
    func appending(_ name: String) -> URL { temporary.appending(name) }

    /// Opens (or reopens) the store kept in the directory.
    func openStore(configuration: StateStore.Configuration = StateStore.Configuration(),
                   now: UnixMilliseconds = StateStore.currentTime()) throws(StoreError) -> StateStore {
        try StateStore.open(directory: path, configuration: configuration, now: now)
    }
}

/// `bytes` as the store keeps a wrapped key: lower-case hex.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

/// Whether `state.db` in `directory`, its -wal or its -shm holds `text`.
func filesContain(_ directory: String, _ text: String) throws -> Bool {
    databaseFilesContain(directory + "/" + StateStore.databaseFileName, text)
}

/// Whether the database at `path`, its -wal or its -shm holds `text`.
func databaseFilesContain(_ path: String, _ text: String) -> Bool {
    let needle = Array(text.utf8)
    for suffix in ["", "-wal", "-shm"] {
        guard let file = fopen(path + suffix, "rb") else { continue }
        defer { fclose(file) }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while case let count = fread(&buffer, 1, buffer.count, file), count > 0 { contents += buffer[..<count] }
        let found = contents.withUnsafeBufferPointer { haystack in
            haystack.count >= needle.count && (0...(haystack.count - needle.count)).contains { start in
                haystack[start] == needle[0] && (1..<needle.count).allSatisfy { haystack[start + $0] == needle[$0] }
            }
        }
        if found { return true }
    }
    return false
}

/// Where (in hex digits) the first 32-digit window of `keyHex` lies that the database at
/// `path`, its -wal or its -shm holds, if any: any 16 bytes of a wrapped key count, as a stale
/// or damaged cell may hold part of one.
func partOfKey(_ keyHex: String, foundIn path: String) -> Int? {
    let digits = Array(keyHex.utf8)
    return stride(from: 0, through: digits.count - 32, by: 8).first { start in
        databaseFilesContain(path, String(decoding: digits[start..<start + 32], as: UTF8.self))
    }
}
