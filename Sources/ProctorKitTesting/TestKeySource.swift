public import ProctorCrypto
import Synchronization
public import ProctorKit

/// A protected-storage key source for tests: one fixed key, no proctord. Give it to
/// `ProtectedStorage(dataDirectory:keySource:)` (or `ProtectedStorage.shared.configure`) and a
/// delegate's storage code runs as in an app; `destroyKey()` plays a wipe's crypto-shredding, after
/// which the storage cannot get a key, and a second source stands for a rotated key.
public final class TestKeySource: ProtectedStorageKeySource {
    private let key: Mutex<SymmetricKey?>

    /// A source with a fresh random key.
    public init() throws(CryptoError) { key = Mutex(try SymmetricKey.random()) }

    /// A source with `key`.
    public init(key: SymmetricKey) { self.key = Mutex(key) }

    /// The key, until `destroyKey()`.
    public func dataKey() throws(ProtectedStorageError) -> SymmetricKey {
        guard let key = key.withLock({ $0 }) else { throw .keyUnavailable(reason: "the test key was destroyed") }
        return key
    }

    /// Forgets the key, as proctord does on a wipe.
    public func destroyKey() { key.withLock { $0 = nil } }
}
