import Foundation
import JSONCore
import LinuxIO
import ProctorPolicy
import ProctorProtocol

/// `dlp.fileExport.enforcement: "kernel"`: the process confines its own writes with Landlock
/// (docs/sdk.md, "Who enforces what").
extension PolicyApplication {
    /// What any confined process may still write to, whatever the rule: the null, zero and full
    /// devices and the terminal. Nothing else is needed to run: the Agent socket, the journal
    /// and sd_notify are reached by connect(2)/sendto(2), which Landlock's file-system rights do
    /// not govern, the kernel keyring is not a file, and descriptors already open (standard
    /// output and error) keep working — Landlock checks a file when it is opened.
    static let writableToRun = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts"]

    /// The oldest Landlock ABI that confines every kind of write: ABI 3 added truncation, so
    /// on ABI 1–2 a file outside the allowed places could still be emptied.
    static let minimumLandlockABI = 3

    /// Puts the export rule's enforcement of `update` in force: under `"kernel"` a first
    /// Landlock layer, or another one when the rule allows less than before; a rule that allows
    /// more, or is advisory again, is for the next launch (`applicationShouldRestart`).
    func enforceExportRule(_ update: AgentUpdate, settings: PolicyAppSettings) {
        let fileExport = update.dlp["fileExport"]?.objectValue ?? [:]
        let kernel = fileExport["enforcement"]?.stringValue == ExportEnforcement.kernel.rawValue
        let writable = kernel ? writablePlaces(allow: fileExport["allow"]?.arrayValue?.compactMap(\.stringValue),
                                               dataDirectories: settings.dataDirectories) : nil
        defer { writable?.checked.forEach { try? $0.descriptor.close() } }
        for action in exportConfinement.actions(for: writable?.places) {
            switch action {
            case .restrict(let places):
                confineWrites(to: places, missing: writable?.missing ?? [], checked: writable?.checked ?? [])
            case .askRestart(let reason):
                askForRestart(reason)
            }
        }
    }

    /// A place the export rule lets the app write, as the SDK checked it: `path` names it among
    /// the rule's places, and the rule is added on `descriptor`, open on what was checked — by its
    /// path, a link put in its place after the check would get the rule instead.
    struct CheckedPlace {
        let path: String
        let descriptor: FileDescriptor
    }

    /// The places a confined app may write to: its data directories (created, 0700, when
    /// missing, as the app could not create them afterwards), the directories of the export
    /// rule's allow list for this user, the offline view's file, and `writableToRun`; `missing` the allowed directories
    /// that do not exist (a Landlock rule needs an existing file); `checked` the places among
    /// `places` that were opened where they were checked (all but `writableToRun`), which the
    /// caller closes.
    private func writablePlaces(allow patterns: [String]?, dataDirectories: [String])
        -> (places: [String], missing: [String], checked: [CheckedPlace]) {
        let wiper = DataWiper.forCurrentProcess(environment: ProcessInfo.processInfo.environment)
        var places: [String] = [], missing: [String] = [], checked: [CheckedPlace] = []
        for directory in dataDirectories {
            guard case .success(let path) = wiper.usablePath(directory) else { continue }
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
            switch Self.checkedDataDirectory(path, wiper: wiper) {
            case .success(let place):
                places.append(path)
                checked.append(place)
            case .failure(let refusal): report(Diagnostic(message: "\(refusal.reason); it is not writable while confined"))
            }
        }
        for pattern in patterns ?? [] {
            let directory = ExportConfinement.writableDirectory(of: pattern, home: wiper.home)
            // Not through a link at its own name: the rule would go wherever the link leads.
            switch Result(catching: { () throws(Errno) in try Landlock.openDirectory(directory, followingLinks: false) }) {
            case .success(let opened):
                places.append(directory)
                checked.append(CheckedPlace(path: directory, descriptor: opened))
            case .failure(let error) where error.rawValue == ENOENT: missing.append(directory)
            case .failure(let error):
                report(Diagnostic(message: "\(directory), allowed by the export rule, is not writable while confined: "
                                  + (error.rawValue == ELOOP || error.rawValue == ENOTDIR ? "not a directory (a link?)" : "\(error)")))
            }
        }
        // The SDK's own offline view, this one file only (docs/sdk.md, "The offline cache under
        // the kernel's export rule"): without it a confined app could never update its view.
        switch viewCache?.fileForConfinement() {
        case .success(let file):
            places.append(file.path)
            checked.append(CheckedPlace(path: file.path, descriptor: file.descriptor))
        case .failure(let refusal): report(Diagnostic(message: "\(refusal); the offline view will not be updated while confined"))
        case nil: break
        }
        places += Self.writableToRun.filter { FileManager.default.fileExists(atPath: $0) }
        var seen = Set<[UInt8]>()  // by bytes: two spellings of "café" are two directories
        return (places.filter { seen.insert(Array($0.utf8)).inserted }, missing, checked)
    }

    /// The data directory `path`, open, if what it names lies where a wipe reaches: the check is
    /// made on the descriptor (its `/proc/self/fd` name, with no link in it), so the check and the
    /// rule added on it are about one directory, whatever the path names by then. It may be a
    /// link (a wipe empties what it leads to, `DataWiper`): where it leads is what is checked.
    nonisolated static func checkedDataDirectory(_ path: String, wiper: DataWiper) -> Result<CheckedPlace, DataWiperRefusal> {
        let directory: FileDescriptor
        do throws(Errno) { directory = try Landlock.openDirectory(path, followingLinks: true) } catch {
            return .failure(DataWiperRefusal(reason: "cannot open the data directory \(path): \(error)"))
        }
        var name = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/fd/\(directory.rawValue)", &name, name.count - 1)
        let actual = length > 0 ? String(decoding: name[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        guard wiper.reaches(resolved: actual) else {
            try? directory.close()
            return .failure(DataWiperRefusal(reason: "the data directory \(path) leads to \(actual.isEmpty ? "an unknown place" : actual), "
                                             + "outside the user's home and the app's state directories"))
        }
        return .success(CheckedPlace(path: path, descriptor: directory))
    }

    /// Adds the Landlock layer on every thread and tells proctord (`fileExportEnforcement`
    /// event) whether the kernel enforces the rule or, without Landlock, the app merely asks.
    /// The places among `places` that were `checked` get their rule on the descriptor, not by their path.
    private func confineWrites(to places: [String], missing: [String], checked: [CheckedPlace]) {
        // ProctorKitTesting's harness runs the application inside a test process, which must
        // go on writing its results: only a process ApplicationMain took over is confined.
        guard Application.current === self else {
            return fallBackToAdvisory("the application does not run under ApplicationMain (an in-process test harness)")
        }
        let outcome: Result<Int, LandlockError> = Result { () throws(LandlockError) -> Int in
            let abi = try Landlock.abiVersion()
            guard abi >= Self.minimumLandlockABI else { return abi }
            let isChecked = { (place: String) in checked.contains { place.hasSameBytes(as: $0.path) } }
            let opened = checked.filter { place in places.contains { $0.hasSameBytes(as: place.path) } }.map(\.descriptor)
            return try Landlock.restrictModifications(toBeneath: places.filter { !isChecked($0) }, places: opened,
                                                      scope: .everyThread)
        }
        switch outcome {
        case .success(let abi) where abi >= Self.minimumLandlockABI:
            exportConfinement.restricted(places)
            var detail: [String: JSONValue] = ["enforcement": "kernel", "landlockABI": .number(abi),
                                               "writable": .array(places.map(JSONValue.string))]
            if !missing.isEmpty { detail["missing"] = .array(missing.map(JSONValue.string)) }
            reporter?.event(Agent.fileExportEnforcementEvent, detail: detail)
        case .success(let abi):
            fallBackToAdvisory("the kernel's Landlock ABI \(abi) cannot refuse truncation (ABI \(Self.minimumLandlockABI) needed)")
        case .failure(.unavailable(let errno)):
            fallBackToAdvisory("the kernel has no Landlock: \(errno)")
        case .failure(let error) where !exportConfinement.layers.isEmpty:
            // Already confined (by the looser rule): that stays; the tighter one needs a fresh
            // process — such as past Landlock's 16 layers (E2BIG).
            askForRestart("the kernel could not add the tighter export rule (\(error))")
        case .failure(let error):
            // Partly applied at worst (a thread that blocks SIGPROF): layers only tighten, but the
            // rule is not known to hold for every thread, so it is reported as advisory.
            fallBackToAdvisory("\(error)")
        }
    }

    /// A rule that only a new process can put in force: said on standard error and to the delegate.
    private func askForRestart(_ reason: String) {
        report(Diagnostic(message: "restart needed: \(reason)"))
        delegate?.applicationShouldRestart(self, reason: reason)
    }

    /// Says once, on standard error and to proctord, that the export rule is advisory here.
    private func fallBackToAdvisory(_ reason: String) {
        exportConfinement.landlockUnavailable()
        report(Diagnostic(message: "dlp.fileExport.enforcement is \"kernel\" but \(reason): "
                          + "the export rule is advisory, enforced only where the app asks DataGuard"))
        reporter?.event(Agent.fileExportEnforcementEvent, detail: ["enforcement": "advisory", "reason": .string(reason)])
    }
}
