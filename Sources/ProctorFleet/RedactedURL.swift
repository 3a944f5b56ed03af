extension FleetConfiguration {
    /// `url` as logs, Status and status documents show it: without the parts that may carry a
    /// secret — its user information (`user:password@`) and its query (`?token=…`, a pre-signed
    /// URL's signature) — each replaced by `<redacted>`. libcurl is still given the whole URL;
    /// the journal is read by more people than proctord.conf (mode 0600 is the administrator's
    /// to choose), and a status document goes to whichever server `StatusURL=` names.
    public static func redacted(_ url: String) -> String {
        let characters = Array(url)
        guard let colon = characters.indices.first(where: { characters[$0...].starts(with: [":", "/", "/"]) }) else { return url }
        let authorityStart = colon + 3
        let authorityEnd = characters[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? characters.endIndex
        var shown = String(characters[..<authorityStart])
        if let at = characters[authorityStart..<authorityEnd].lastIndex(of: "@") {
            shown += "<redacted>"
            shown += String(characters[at..<authorityEnd])
        } else {
            shown += String(characters[authorityStart..<authorityEnd])
        }
        if let question = characters[authorityEnd...].firstIndex(of: "?") {
            shown += String(characters[authorityEnd..<question])
            shown += "?<redacted>"
        } else {
            shown += String(characters[authorityEnd...])
        }
        return shown
    }
}
