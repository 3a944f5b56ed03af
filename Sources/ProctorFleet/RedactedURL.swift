extension FleetConfiguration {
    /// `url` as logs, Status and status documents show it: without the parts that may carry a
    /// secret — its user information (`user:password@`) and its query (`?token=…`, a pre-signed
    /// URL's signature) — each replaced by `<redacted>`. libcurl is still given the whole URL;
    /// the journal is read by more people than proctord.conf (mode 0600 is the administrator's
    /// to choose), and a status document goes to whichever server `StatusURL=` names.
    ///
    /// The user information is taken to run to the last `@` before the first `/`, further than
    /// libcurl reads it (to the first `/`, `?` or `#`): a password written with its `?` or `#`
    /// unescaped makes a URL libcurl cannot use, and must not show in the error that says so.
    public static func redacted(_ url: String) -> String {
        let characters = Array(url)
        guard let colon = characters.indices.first(where: { characters[$0...].starts(with: [":", "/", "/"]) }) else { return url }
        var rest = colon + 3
        let authorityEnd = characters[rest...].firstIndex(of: "/") ?? characters.endIndex
        var shown = String(characters[..<rest])
        if let at = characters[rest..<authorityEnd].lastIndex(of: "@") {
            shown += "<redacted>"
            rest = at
        }
        if let query = characters[rest...].firstIndex(where: { $0 == "?" || $0 == "#" }) {
            shown += String(characters[rest..<query])
            shown += String(characters[query]) + "<redacted>"
        } else {
            shown += String(characters[rest...])
        }
        return shown
    }
}
