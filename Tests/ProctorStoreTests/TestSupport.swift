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
