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
        defer { try? writable?.viewFile?.descriptor.close() }
        for action in exportConfinement.actions(for: writable?.places) {
            switch action {
            case .restrict(let places):
                confineWrites(to: places, missing: writable?.missing ?? [], viewFile: writable?.viewFile)
            case .askRestart(let reason):
                askForRestart(reason)
            }
        }
    }

    /// The places a confined app may write to: its data directories (created, 0700, when
    /// missing, as the app could not create them afterwards), the directories of the export
    /// rule's allow list for this user, the offline view's file, and `writableToRun`; `missing` the allowed directories
    /// that do not exist (a Landlock rule needs an existing file); `viewFile` the offline view's
    /// file as checked, open, which is among `places` by its path.
    private func writablePlaces(allow patterns: [String]?, dataDirectories: [String])
        -> (places: [String], missing: [String], viewFile: OfflineViewCache.ConfinedFile?) {
        let wiper = DataWiper.forCurrentProcess(environment: ProcessInfo.processInfo.environment)
        var places: [String] = []
        for directory in dataDirectories {
            guard case .success(let path) = wiper.usablePath(directory) else { continue }
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
            places.append(path)
        }
        var missing: [String] = []
        for pattern in patterns ?? [] {
            let directory = ExportConfinement.writableDirectory(of: pattern, home: wiper.home)
            if FileManager.default.fileExists(atPath: directory) { places.append(directory) } else { missing.append(directory) }
        }
        // The SDK's own offline view, this one file only (docs/sdk.md, "The offline cache under
        // the kernel's export rule"): without it a confined app could never update its view.
        var viewFile: OfflineViewCache.ConfinedFile?
        switch viewCache?.fileForConfinement() {
        case .success(let file):
            places.append(file.path)
            viewFile = file
        case .failure(let refusal): report(Diagnostic(message: "\(refusal); the offline view will not be updated while confined"))
        case nil: break
        }
        places += Self.writableToRun.filter { FileManager.default.fileExists(atPath: $0) }
        var seen = Set<[UInt8]>()  // by bytes: two spellings of "café" are two directories
        return (places.filter { seen.insert(Array($0.utf8)).inserted }, missing, viewFile)
    }

    /// Adds the Landlock layer on every thread and tells proctord (`fileExportEnforcement`
    /// event) whether the kernel enforces the rule or, without Landlock, the app merely asks.
    /// The view file among `places` gets its rule on `viewFile`'s descriptor, not by its path.
    private func confineWrites(to places: [String], missing: [String], viewFile: OfflineViewCache.ConfinedFile?) {
        // ProctorKitTesting's harness runs the application inside a test process, which must
        // go on writing its results: only a process ApplicationMain took over is confined.
        guard Application.current === self else {
            return fallBackToAdvisory("the application does not run under ApplicationMain (an in-process test harness)")
        }
        let outcome: Result<Int, LandlockError> = Result { () throws(LandlockError) -> Int in
            let abi = try Landlock.abiVersion()
            guard abi >= Self.minimumLandlockABI else { return abi }
            let isViewFile = { (place: String) in viewFile.map { place.hasSameBytes(as: $0.path) } ?? false }
            let files = places.contains(where: isViewFile) ? viewFile.map { [$0.descriptor] } ?? [] : []
            return try Landlock.restrictModifications(toBeneath: places.filter { !isViewFile($0) }, files: files,
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
