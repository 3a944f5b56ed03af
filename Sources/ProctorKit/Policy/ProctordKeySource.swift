import KernelKeyring
import ProctorCrypto
import Synchronization

/// The data key proctord released to this app (`Agent.GetDataKey`), as `ProtectedStorage.shared`
/// gets it: in memory while the app runs, and — for use while proctord is unreachable — in the
/// user's kernel keyring (`proctor:<app id>:data-key`), expiring after the app's offline grace.
/// Never in a file. A wipe forgets both copies (`forget()`).
///
/// The keyring copy is readable by processes of the same user that possess the user keyring:
/// on Linux the user is the boundary the kernel draws; proctord's rules decide which user and
/// executable the key is released to in the first place.
final class ProctordKeySource: ProtectedStorageKeySource {
    private let current = Mutex<(key: SymmetricKey, generation: Int)?>(nil)
    let keyringName: String

    init(appID: String) { keyringName = "proctor:\(appID):data-key" }

    /// Puts `key` in force and refreshes the keyring copy's expiry to `offlineGraceSeconds`.
    /// A keyring failure leaves the in-memory key in force and is returned for the operator.
    @discardableResult
    func install(_ key: SymmetricKey, generation: Int, offlineGraceSeconds: Int) -> KernelKeyringError? {
        current.withLock { $0 = (key, generation) }
        do {
            try key.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(KernelKeyringError) in
                try KernelKeyring.add(keyringName, payload: bytes, to: .user,
                                      expiresAfterSeconds: UInt32(clamping: max(1, offlineGraceSeconds)))
            }
            return nil
        } catch {
            return error
        }
    }

    /// Forgets the key in memory and revokes the keyring copy (a wipe's local half; proctord has
    /// already destroyed its own).
    func forget() {
        current.withLock { $0 = nil }
        if let cached = try? KernelKeyring.find(keyringName, in: .user) { try? KernelKeyring.revoke(cached) }
    }

    /// The generation in force, if a key is.
    var generation: Int? { current.withLock { $0?.generation } }

    func dataKey() throws(ProtectedStorageError) -> SymmetricKey {
        if let key = current.withLock({ $0?.key }) { return key }
        do {
            guard let cached = try KernelKeyring.find(keyringName, in: .user) else {
                throw ProtectedStorageError.keyUnavailable(reason: "proctord has not released the data key to this app "
                    + "and no unexpired copy is in the kernel keyring")
            }
            let key = try KernelKeyring.withPayload(of: cached) { bytes in Result { () throws(CryptoError) in try SymmetricKey(copying: bytes) } }
            return try key.get()
        } catch let error as ProtectedStorageError {
            throw error
        } catch {
            throw .keyUnavailable(reason: "the kernel keyring's copy cannot be read: \(error)")
        }
    }
}
