public import ProctorCrypto

/// Supplies the data key that protected storage encrypts with: in an app, the per-app,
/// per-user key proctord releases to the registered session; in tests, a fixed key
/// (`ProctorKitTesting.TestKeySource`).
public protocol ProtectedStorageKeySource: Sendable {
    /// The current data key; `.keyUnavailable` when it cannot be had (proctord unreachable and
    /// nothing cached, or the key was destroyed by a wipe).
    func dataKey() throws(ProtectedStorageError) -> SymmetricKey
}
