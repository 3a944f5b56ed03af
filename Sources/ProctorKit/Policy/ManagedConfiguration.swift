public import Foundation
public import JSONCore
import Synchronization

/// The app's managed configuration (the `config` object of its policy entry), read-only, like
/// `UserDefaults` under `com.apple.configuration.managed` on iOS.
///
/// `PolicyApplication` keeps it current: a change pushed by proctord replaces the whole
/// dictionary, then `didChangeNotification` is posted on the main queue and the delegate's
/// `applicationManagedConfigurationDidChange` runs. Reads are safe from any thread.
public final class ManagedConfiguration: Sendable {
    /// The configuration of the running `PolicyApplication`.
    public static let shared = ManagedConfiguration()

    /// Posted (object: the configuration) after a pushed change is in place.
    public static let didChangeNotification = Notification.Name("ProctorKit.ManagedConfigurationDidChange")

    private let values = Mutex<[String: JSONValue]>([:])

    /// An empty configuration.
    public init() {}

    /// The whole configuration.
    public func dictionaryRepresentation() -> [String: JSONValue] { values.withLock { $0 } }
    /// The raw value for `key`, nil when absent.
    public func value(forKey key: String) -> JSONValue? { values.withLock { $0[key] } }
    /// The string at `key`; nil when absent or not a string.
    public func string(forKey key: String) -> String? { value(forKey: key)?.stringValue }
    /// The integer at `key`; nil when absent or not a whole number.
    public func integer(forKey key: String) -> Int? { value(forKey: key)?.intValue }
    /// The number at `key`; nil when absent or not a number.
    public func double(forKey key: String) -> Double? { value(forKey: key)?.doubleValue }
    /// The boolean at `key`; nil when absent or not a boolean.
    public func bool(forKey key: String) -> Bool? { value(forKey: key)?.boolValue }
    /// The array at `key`; nil when absent or not an array.
    public func array(forKey key: String) -> [JSONValue]? { value(forKey: key)?.arrayValue }
    /// The object at `key`; nil when absent or not an object.
    public func dictionary(forKey key: String) -> [String: JSONValue]? { value(forKey: key)?.objectValue }

    /// Replaces the configuration; true when it changed.
    func replace(with configuration: [String: JSONValue]) -> Bool {
        values.withLock { current in
            guard current != configuration else { return false }
            current = configuration
            return true
        }
    }
}
