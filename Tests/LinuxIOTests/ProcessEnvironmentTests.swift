import Glibc
import LinuxIO
import Testing

/// proctord and proctorctl read their environment with `processEnvironment()`.
@Suite(.serialized) struct ProcessEnvironmentTests {
    /// An entry is split at its first "=" byte: a value that begins with a combining mark makes
    /// "=\u{301}" one `Character`, which is not "=" (the variable was lost, or split at a later "=").
    @Test func anEntryIsSplitAtTheFirstEqualsByte() {
        #expect(setenv("PROCTOR_TEST_COMBINING", "\u{301}x=y", 1) == 0)
        defer { unsetenv("PROCTOR_TEST_COMBINING") }
        let environment = processEnvironment()
        #expect(environment["PROCTOR_TEST_COMBINING"] == "\u{301}x=y")
        #expect(environment["PROCTOR_TEST_COMBINING=\u{301}x"] == nil)
    }

    /// Of two entries with one name (possible in an `envp` that `execve` was given), the first
    /// counts, as for `getenv`, which proctord's libraries use.
    @Test func ofDuplicateNamesTheFirstWinsAsForGetenv() {
        let first = strdup("PROCTOR_TEST_TWICE=first"), second = strdup("PROCTOR_TEST_TWICE=second")
        defer { free(first); free(second) }
        var entries: [UnsafeMutablePointer<CChar>?] = [first, second, nil]
        let value = entries.withUnsafeMutableBufferPointer { processEnvironment($0.baseAddress!)["PROCTOR_TEST_TWICE"] }
        #expect(value == "first")
    }
}
