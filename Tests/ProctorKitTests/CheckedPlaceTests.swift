import Foundation
import Glibc
import LinuxIO
@testable import ProctorKit
import Testing
import TestSupport

/// The export rule's Landlock layer names the data directories the SDK checked, by descriptor:
/// a link another process of the user puts in a directory's place after the check gets no rule.
@Suite struct CheckedPlaceTests {
    let directory: TemporaryDirectory
    var home: String { directory.path }
    var wiper: DataWiper { DataWiper(home: home, stateDirectories: []) }

    init() throws { directory = try TemporaryDirectory(prefix: "proctor-checked-place") }

    @Test func theRuleNamesTheDataDirectoryThatWasCheckedNotWhatItsPathLeadsToLater() throws {
        let data = home + "/kit-data", moved = home + "/kit-data.moved", elsewhere = home + "/Desktop"
        for folder in [data, elsewhere] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let checked = try PolicyApplication.checkedDataDirectory(data, wiper: wiper).get()
        defer { try? checked.descriptor.close() }
        // Swapped after the check: the directory moved away, a link to the user's Desktop in its place.
        #expect(rename(data, moved) == 0 && symlink(elsewhere, data) == 0)
        #expect(failureInForkedChild {
            try Landlock.restrictModifications(toBeneath: [], places: [checked.descriptor])
            let exported = open(elsewhere + "/exported", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            try ensure(exported < 0 && errno == EACCES, "a file was created beneath the folder the link leads to")
            let throughLink = open(data + "/exported", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            try ensure(throughLink < 0 && errno == EACCES, "a file was created through the link")
            // The checked directory itself, wherever it is now, stays writable.
            let kept = open(moved + "/kept", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            try ensure(kept >= 0, "the checked directory cannot be written: errno \(errno)")
        } == nil)
    }

    @Test func aDataDirectoryIsCheckedWhereItLeadsWhenOpenedAndOutsideTheHomeIsRefused() throws {
        let outside = try TemporaryDirectory(prefix: "proctor-checked-outside")
        let data = home + "/kit-data"
        #expect(symlink(outside.path, data) == 0)
        switch PolicyApplication.checkedDataDirectory(data, wiper: wiper) {
        case .success(let place):
            try? place.descriptor.close()
            Issue.record("a data directory leading outside the home was offered to the export rule")
        case .failure(let refusal):
            #expect(refusal.reason.contains("leads to \(outside.path), outside the user's home"))
        }
        // A link that stays inside the home is a data directory like any other (a wipe empties its target).
        let inside = home + "/real-data"
        try FileManager.default.createDirectory(atPath: inside, withIntermediateDirectories: true)
        #expect(unlink(data) == 0 && symlink(inside, data) == 0)
        let place = try PolicyApplication.checkedDataDirectory(data, wiper: wiper).get()
        try? place.descriptor.close()
    }
}
