import JSONCore

/// What a compiled policy keeps of each app's entry besides its resolved settings — `match`,
/// `config` and the two settings no decision reads a layer of — so that `appPolicy` rebuilds
/// the entry exactly and the parsed `Policy` need not stay in memory (at 100 000 apps it was
/// a third of proctord's resident memory). Executables share one byte arena; identical user
/// lists are stored once (most apps have none, or `["*"]`); a config is kept as parsed, one
/// per app that has one (an empty config takes no room).
///
/// Which of the other settings the app itself said follows from the record: a setting whose
/// layer is `app` holds the app's own value (`CompiledTables.overlay`).
struct AppEntries: Sendable {
    struct Entry: Sendable {
        /// Where the executable's bytes start in `executableBytes`; `executableLength` is
        /// `noExecutable` when the match says none (or there is no match).
        var executableStart: UInt32
        var executableLength: UInt32
        /// Into `userLists`, -1 when the match says none.
        var users: Int32
        /// Into `configs`, -1 for an empty config.
        var config: Int32
        var flags: Flags
    }

    struct Flags: OptionSet, Sendable {
        let rawValue: UInt8
        static let hasMatch = Flags(rawValue: 1)
        /// The app says `compliance.offlineWipeSeconds` itself.
        static let saysOfflineWipe = Flags(rawValue: 2)
        /// The app says `dlp.fileExport.enforcement` itself.
        static let saysEnforcement = Flags(rawValue: 4)
    }

    static let noExecutable = UInt32.max

    /// In the order of the sorted ids (record order, `AppTable.positions`).
    private(set) var entries: [Entry] = []
    private var executableBytes: [UInt8] = []
    private(set) var userLists: [[String]] = []
    private(set) var configs: [[String: JSONValue]] = []
    private var userListPositions: [[String]: Int32] = [:]

    init(capacity: Int) {
        entries.reserveCapacity(capacity)
    }

    /// Entries from a snapshot (`CompiledPolicySnapshot`), checked by the caller.
    init(entries: [Entry], executableBytes: [UInt8], userLists: [[String]], configs: [[String: JSONValue]]) {
        self.entries = entries
        self.executableBytes = executableBytes
        self.userLists = userLists
        self.configs = configs
    }

    /// The executables' byte arena, for a snapshot.
    var executableArena: [UInt8] { executableBytes }

    /// Records `app`, the next in record order.
    mutating func append(_ app: AppPolicy) {
        var flags: Flags = []
        var executable: (start: UInt32, length: UInt32) = (0, Self.noExecutable)
        var users: Int32 = -1
        if let match = app.match {
            flags.insert(.hasMatch)
            if let path = match.executable {
                precondition(executableBytes.count + path.utf8.count < Int(UInt32.max), "executables beyond 4 GiB")
                executable = (UInt32(executableBytes.count), UInt32(path.utf8.count))
                executableBytes.append(contentsOf: path.utf8)
            }
            if let list = match.users { users = userList(list) }
        }
        var config: Int32 = -1
        if !app.config.isEmpty {
            configs.append(app.config)
            config = Int32(configs.count - 1)
        }
        if app.settings.compliance.offlineWipeSeconds != nil { flags.insert(.saysOfflineWipe) }
        if app.settings.dlp.fileExportEnforcement != nil { flags.insert(.saysEnforcement) }
        entries.append(Entry(executableStart: executable.start, executableLength: executable.length, users: users,
                             config: config, flags: flags))
    }

    /// Drops the interning table and spare capacity once every app is in.
    mutating func finish() {
        userListPositions = [:]
        entries = Array(entries)
        executableBytes = Array(executableBytes)
    }

    private mutating func userList(_ users: [String]) -> Int32 {
        if let position = userListPositions[users] { return position }
        userLists.append(users)
        let position = Int32(userLists.count - 1)
        userListPositions[users] = position
        return position
    }

    /// The `match` of the app of record `record`.
    func match(_ record: Int) -> MatchRule? {
        let entry = entries[record]
        guard entry.flags.contains(.hasMatch) else { return nil }
        var executable: String?
        if entry.executableLength != Self.noExecutable {
            let start = Int(entry.executableStart)
            executable = executableBytes.withUnsafeBufferPointer {
                String(decoding: UnsafeBufferPointer(rebasing: $0[start..<start + Int(entry.executableLength)]), as: UTF8.self)
            }
        }
        return MatchRule(executable: executable, users: entry.users < 0 ? nil : userLists[Int(entry.users)])
    }

    /// The `config` of the app of record `record`.
    func config(_ record: Int) -> [String: JSONValue] {
        let index = entries[record].config
        return index < 0 ? [:] : configs[Int(index)]
    }
}

extension CompiledTables {
    /// The settings of one layer, as it said them, back from `resolved`: what `layer` supplied.
    /// `offlineWipeSeconds` and `fileExportEnforcement` keep no layer: `saysOfflineWipe` and
    /// `saysEnforcement` say whether the layer set them.
    func settings(of layer: RuleLayer, in resolved: ResolvedSettings, saysOfflineWipe: Bool,
                  saysEnforcement: Bool) -> AppSettings {
        let decision = resolved.decision
        func said(_ setting: RuleSetting) -> Bool { decision.layer(of: setting) == layer }
        func paths(_ list: Int32) -> [String] { pathGlobLists[Int(list)].map(\.pattern) }
        let dlp = DLPSettings(
            clipboardLevel: said(.clipboardLevel) ? decision.clipboardLevel : nil,
            clipboardCharLimit: said(.clipboardCharLimit) ? decision.clipboardCharLimit : nil,
            shareSend: said(.shareSend) ? decision.shareSend : nil,
            shareReceive: said(.shareReceive) ? decision.shareReceive : nil,
            shareExempt: said(.shareExempt) ? appIDGlobLists[Int(decision.shareExempt)].patterns : nil,
            print: said(.print) ? decision.print : nil,
            screenCapture: said(.screenCapture) ? decision.screenCapture : nil,
            fileExportAllow: said(.fileExportAllow) ? paths(decision.fileExportAllow) : nil,
            fileExportDeny: said(.fileExportDeny) ? paths(decision.fileExportDeny) : nil,
            fileExportEnforcement: saysEnforcement ? decision.fileExportEnforcement : nil,
            notifications: said(.notifications) ? decision.notifications : nil)
        let compliance = ComplianceSettings(
            minVersion: said(.minVersion) ? versions[Int(decision.minVersion)] : nil,
            onViolation: said(.onViolation) ? decision.onViolation : nil,
            offlineGraceSeconds: said(.offlineGraceSeconds) ? resolved.offline.grace : nil,
            offlineWipeSeconds: saysOfflineWipe ? resolved.offline.wipe : nil)
        return AppSettings(dlp: dlp, compliance: compliance)
    }
}
