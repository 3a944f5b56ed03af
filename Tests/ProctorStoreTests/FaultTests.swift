import Foundation
import Glibc
import Testing
import TestSupport
@testable import ProctorStore

/// Real file-system faults: a tiny tmpfs that fills up, a read-only bind mount. Needs root
/// (mount); skipped otherwise.
@Suite(.enabled(if: geteuid() == 0, "mounting file systems needs root"))
struct FaultTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    @Test func aFullDiskFailsWritesCleanlyAndKeepsTheLastGoodState() throws {
        let mountPoint = directory.appending("small").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        #expect(try runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", mountPoint]) == 0)
        defer { _ = try? runCommand("/bin/umount", ["-l", mountPoint]) }

        let store = try StateStore.open(directory: mountPoint)
        var applied: [BundleRecord] = []
        var failure: StoreError?
        for version in 1...40 {
            do {
                applied.append(try store.applyForTest("\(version)", padding: 60_000))
            } catch {
                failure = error
                break
            }
        }
        #expect(failure == .storageFull(path: mountPoint + "/state.db"))
        #expect(applied.count >= 2)

        // Reads still serve exactly the last committed bundle and a consistent history.
        #expect(try store.currentBundle() == applied.last)
        #expect(try store.history() == Array(applied.reversed()))
        // Other writes fail the same way and change nothing.
        var wipeFailure: StoreError?
        for index in 0..<200 {
            do {
                _ = try store.issueWipe(appID: "com.example.notes\(index)", issuedAt: 1, byUID: 0)
            } catch {
                wipeFailure = error
                break
            }
        }
        #expect(wipeFailure == .storageFull(path: mountPoint + "/state.db"))
        #expect(try store.currentBundle() == applied.last)
        store.close()

        // After a restart the same state is there; freeing space makes writes work again.
        let reopened = try StateStore.open(directory: mountPoint)
        #expect(try reopened.currentBundle() == applied.last)
        #expect(try reopened.history().count == applied.count)
        #expect(try runCommand("/bin/mount", ["-o", "remount,size=4m", mountPoint]) == 0)
        try reopened.applyForTest("after")
        #expect(try reopened.currentBundle()?.version == "after")
        reopened.close()
    }

    @Test func aReadOnlyStateDirectoryServesReadsAndRefusesWrites() throws {
        let writable = directory.appending("state").path
        let readOnly = directory.appending("readonly").path
        let store = try StateStore.open(directory: writable)
        let bundle = try store.applyForTest("1")
        let wipe = try store.issueWipe(appID: "a", issuedAt: 1, byUID: 0)
        store.close()

        try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: false)
        #expect(try runCommand("/bin/mount", ["--bind", writable, readOnly]) == 0)
        defer { _ = try? runCommand("/bin/umount", ["-l", readOnly]) }
        #expect(try runCommand("/bin/mount", ["-o", "remount,bind,ro", readOnly]) == 0)

        let readOnlyStore = try StateStore.open(directory: readOnly)
        #expect(readOnlyStore.isReadOnly)
        #expect(try readOnlyStore.currentBundle() == bundle)
        #expect(try readOnlyStore.pendingWipes(appID: "a") == [wipe])
        let path = readOnly + "/state.db"
        #expect(throws: StoreError.readOnly(path: path)) { try readOnlyStore.applyForTest("2") }
        #expect(throws: StoreError.readOnly(path: path)) { try readOnlyStore.issueWipe(appID: "a", issuedAt: 2, byUID: 0) }
        #expect(throws: StoreError.readOnly(path: path)) { try readOnlyStore.acknowledgeWipe(id: wipe.id, appID: "a", at: 3) }
        #expect(try readOnlyStore.currentBundle() == bundle)
        readOnlyStore.close()

        // No database at all in a read-only directory: a clear error, not a crash.
        let empty = directory.appending("empty").path
        let emptyReadOnly = directory.appending("empty-ro").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: emptyReadOnly, withIntermediateDirectories: false)
        #expect(try runCommand("/bin/mount", ["--bind", "-o", "ro", empty, emptyReadOnly]) == 0)
        defer { _ = try? runCommand("/bin/umount", ["-l", emptyReadOnly]) }
        #expect(try runCommand("/bin/mount", ["-o", "remount,bind,ro", emptyReadOnly]) == 0)
        #expect(throws: StoreError.readOnly(path: emptyReadOnly + "/state.db")) { try StateStore.open(directory: emptyReadOnly) }
    }
}
