import Glibc
import JSONCore
import LinuxIO
import ProctorPolicy

/// A compliance violation's shred whose destroying write failed (`UnfinishedShred`): the key
/// of `uid` for `appID` is condemned, and proctord retries until it is destroyed.
struct PendingViolationShred: Equatable {
    let appID: AppID
    let uid: UInt32
    /// The version that violated, for the log.
    let appVersion: String?
    /// The newest key generation condemned: the keys made since (after the shred was done, if
    /// the record's removal failed) are not the violation's to destroy. Nil when the store could
    /// not say (every live key is destroyed), and in records of earlier versions.
    let throughGeneration: Int64?
}

/// `pending-shreds` in the state directory: the `PendingViolationShred`s not done yet, so that
/// a restart (a stop, a crash) does them at its start rather than forgetting them — nothing
/// else in the state says a violation condemned a key. Outside the database on purpose: the
/// write that failed was the database's (another process held its lock, the disk was full…),
/// and a record in it would have failed alike. A retirement's shred needs no record (every
/// start destroys the keys of the apps the policy retires), nor do keys a shred destroyed whose
/// old bytes may still be in the write-ahead log (a start after an unclean stop erases them).
enum PendingViolationShreds {
    static let fileName = "pending-shreds"

    static func path(in stateDirectory: String) -> String { stateDirectory + "/" + fileName }

    /// Why the file could not be read.
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    /// The shreds recorded in `stateDirectory`; none when there is no file.
    static func read(from stateDirectory: String) throws(Unreadable) -> [PendingViolationShred] {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path(in: stateDirectory), O_RDONLY | O_NOCTTY | O_NONBLOCK)
        } catch .noSuchFileOrDirectory {
            return []
        } catch {
            throw Unreadable(description: "it cannot be opened: \(error)")
        }
        defer { try? descriptor.close() }
        let document: JSONValue
        do {
            document = try JSONParser.parse(try descriptor.readAll(limit: 1 << 20))
        } catch {
            throw Unreadable(description: "it cannot be read as JSON: \(error)")
        }
        guard let shreds = document["violationShreds"]?.arrayValue else {
            throw Unreadable(description: "it holds no \"violationShreds\" array")
        }
        return try shreds.map { shred throws(Unreadable) in
            guard let appID = shred["appId"]?.stringValue, let uid = shred["uid"]?.intValue.flatMap(UInt32.init(exactly:)) else {
                throw Unreadable(description: "a shred lacks its appId or uid: \(shred.serializedString())")
            }
            var throughGeneration: Int64?
            if let bound = shred["throughGeneration"], bound != .null {
                guard let generation = bound.intValue else {
                    throw Unreadable(description: "a shred's throughGeneration is not an integer: \(shred.serializedString())")
                }
                throughGeneration = Int64(generation)
            }
            return PendingViolationShred(appID: appID, uid: uid, appVersion: shred["appVersion"]?.stringValue,
                                         throughGeneration: throughGeneration)
        }
    }

    /// Replaces the record in `stateDirectory` by `shreds`, durably (readable by the owner only,
    /// as the rest of the state); removes it when there are none.
    static func write(_ shreds: [PendingViolationShred], to stateDirectory: String) throws(FileReplacementError) {
        let destination = path(in: stateDirectory)
        guard !shreds.isEmpty else {
            guard unlink(destination) == 0 || errno == ENOENT else {
                throw FileReplacementError(operation: "unlink", path: destination, errno: .current)
            }
            return try AtomicFileReplacement.syncDirectory(stateDirectory)
        }
        let document = JSONValue.object(["violationShreds": .array(shreds.map { shred in
            .object(["appId": .string(shred.appID), "uid": .number(Double(shred.uid)),
                     "appVersion": shred.appVersion.map(JSONValue.string) ?? .null,
                     "throughGeneration": shred.throughGeneration.map { .number(Double($0)) } ?? .null])
        })])
        AtomicFileReplacement.removeAbandonedTemporaryFiles(in: stateDirectory)
        let replacement = try AtomicFileReplacement(replacing: destination, mode: 0o600)
        try replacement.write(document.serialized() + [UInt8(ascii: "\n")])
        try replacement.commit()
    }
}
