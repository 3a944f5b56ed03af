/// What `PolicyApplication` needs to know about the app before it registers, from the code
/// (`PolicyApplication.appID`, `.appVersion`, `.dataDirectories`) or else the Info.plist:
///
/// | Info.plist key | meaning |
/// |---|---|
/// | `ProctorAppID` | the app id in policy (reverse DNS) |
/// | `CFBundleShortVersionString` | the version sent to proctord (checked against `compliance.minVersion`) |
/// | `ProctorDataDirectories` | the folders a wipe removes (`~/…` allowed) |
struct PolicyAppSettings: Equatable {
    static let appIDKey = "ProctorAppID"
    static let versionKey = "CFBundleShortVersionString"
    static let dataDirectoriesKey = "ProctorDataDirectories"

    let appID: String
    let version: String?
    let dataDirectories: [String]

    /// A setting that is missing or has the wrong type, naming the key.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func resolve(info: [String: Any], appID codeAppID: String?, version codeVersion: String?, dataDirectories codeDirectories: [String]?,
                        infoPlistPath: String?) throws(Failure) -> PolicyAppSettings {
        let source = infoPlistPath.map { "Info.plist \($0)" } ?? "Info.plist (none found)"
        let appID: String
        if let codeAppID {
            appID = codeAppID
        } else if let value = info[appIDKey] {
            guard let text = value as? String else { throw Failure(description: "\(appIDKey) in \(source) must be a string") }
            appID = text
        } else {
            throw Failure(description: "no app id: set \(appIDKey) in \(source) or PolicyApplication.appID")
        }
        guard !appID.isEmpty else { throw Failure(description: "the app id is empty") }

        var version = codeVersion
        if version == nil, let value = info[versionKey] {
            guard let text = value as? String else { throw Failure(description: "\(versionKey) in \(source) must be a string") }
            version = text
        }

        var directories: [String] = []
        if let codeDirectories {
            directories = codeDirectories
        } else if let value = info[dataDirectoriesKey] {
            guard let list = value as? [Any], let strings = list as? [String] else {
                throw Failure(description: "\(dataDirectoriesKey) in \(source) must be an array of strings")
            }
            directories = strings
        }
        return PolicyAppSettings(appID: appID, version: version, dataDirectories: directories)
    }
}
