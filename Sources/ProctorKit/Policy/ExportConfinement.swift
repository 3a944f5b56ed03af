import ProctorPolicy

/// `dlp.fileExport.enforcement: "kernel"` as Landlock layers: which places the process may write
/// to, and what a new rule asks of the layers already in force. Pure: `PolicyApplication`
/// carries out the actions (PolicyApplication+KernelEnforcement.swift).
///
/// Layers only tighten — the kernel intersects them — so a rule that allows less becomes another
/// layer at once, and one that allows more (or no longer asks for the kernel) cannot take effect
/// before the process restarts: the delegate is told so.
struct ExportConfinement: Equatable {
    /// The places each layer in force allows writing beneath, oldest first; empty: not confined.
    private(set) var layers: [[String]] = []
    /// Landlock is missing: enforcement stays advisory for the life of the process.
    private(set) var unavailable = false

    enum Action: Equatable {
        /// Add a layer that allows writing beneath these places only.
        case restrict([String])
        /// The rule asks for more than the layers allow; it takes effect at the next launch.
        case askRestart(reason: String)
    }

    /// What the rule `writable` (nil: advisory enforcement) asks for: a new layer when it allows
    /// less than is in force now, a restart when it allows more. The caller reports back with
    /// `restricted(_:)` or `landlockUnavailable()`.
    func actions(for writable: [String]?) -> [Action] {
        guard !unavailable else { return [] }
        guard let writable else {
            return layers.isEmpty ? [] : [.askRestart(reason: "the export rule is no longer enforced by the kernel; "
                                                      + "the kernel keeps confining writes until the app restarts")]
        }
        guard !layers.isEmpty else { return [.restrict(writable)] }
        var actions: [Action] = []
        let allowedNow = layers.joined().filter(allows)
        if allowedNow.contains(where: { place in !writable.contains { place.isBeneath($0) } }) {
            actions.append(.restrict(writable))
        }
        let refused = writable.filter { !allows($0) }
        if !refused.isEmpty {
            actions.append(.askRestart(reason: "the export rule now allows writing to \(refused.joined(separator: ", ")), "
                                       + "which the kernel keeps refusing until the app restarts"))
        }
        return actions
    }

    /// Whether every layer lets the process write beneath `path`.
    func allows(_ path: String) -> Bool {
        layers.allSatisfy { layer in layer.contains { path.isBeneath($0) } }
    }

    mutating func restricted(_ writable: [String]) { layers.append(writable) }
    mutating func landlockUnavailable() { unavailable = true }

    /// The directory the kernel can confine writes to for an allow pattern: its leading literal
    /// components, with a wildcard component resolved where the user's `home` matches the
    /// pattern so far (`/home/*/Documents/Work/**` → `/home/ann/Documents/Work`). What follows
    /// (`*.pdf`, `**/x`) the kernel cannot express; DataGuard still answers it.
    static func writableDirectory(of pattern: String, home: String?) -> String {
        let components = pattern.pathComponents
        let homeComponents = home?.pathComponents ?? []
        var directory: [Substring] = []
        for (index, component) in components.enumerated() {
            if !component.utf8.contains(UInt8(ascii: "*")) {
                directory.append(component)
                continue
            }
            guard component != "**", index < homeComponents.count, directory == Array(homeComponents.prefix(index)),
                  PathGlob("/" + components.prefix(index + 1).joined(separator: "/"))
                      .matches("/" + homeComponents.prefix(index + 1).joined(separator: "/")) else { break }
            directory.append(homeComponents[index])
        }
        return "/" + directory.joined(separator: "/")
    }
}

// Paths are bytes to the kernel. `String`'s `==`, `hasPrefix` and `split` compare canonically
// equivalent Characters: "café" composed and decomposed are one string but two directories, and
// "/" followed by a combining mark is one Character that is not "/" but two components.
extension String {
    /// Whether this path is `base` or lies beneath it, by components and bytes.
    func isBeneath(_ base: String) -> Bool {
        guard utf8.starts(with: base.utf8) else { return false }
        let rest = utf8.dropFirst(base.utf8.count)
        return rest.isEmpty || rest.first == UInt8(ascii: "/") || base.utf8.last == UInt8(ascii: "/")
    }

    /// The path's components, split at each "/" byte, empty ones left out.
    var pathComponents: [Substring] {
        utf8.split(separator: UInt8(ascii: "/")).map { Substring($0) }
    }
}
