public import Foundation
import LinuxIO

/// A fresh directory under the system's temporary folder, removed with everything in it
/// when the value is deinitialised (or by `remove()`).
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    /// Creates the directory (`mkdtemp`, mode 0700); `prefix` names it for whoever finds it.
    public init(prefix: String = "proctor-test") throws(TestSupportError) {
        let created: String
        do {
            created = try Directory.makeTemporary(prefix: prefix, in: NSTemporaryDirectory().trimmingSuffix("/"))
        } catch {
            throw TestSupportError("mkdtemp failed: \(error)")
        }
        url = URL(fileURLWithPath: created, isDirectory: true)
    }

    /// The URL of `name` inside the directory.
    public func appending(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Writes `text` to the file `name` in the directory; returns the file's path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let file = appending(name).path
        try text.write(toFile: file, atomically: false, encoding: .utf8)
        return file
    }

    /// Removes the directory now; later removals do nothing.
    public func remove() { try? FileManager.default.removeItem(at: url) }

    deinit { remove() }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
