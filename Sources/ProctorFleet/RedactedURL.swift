extension FleetConfiguration {
    /// `url` as logs, Status and status documents show it: without the parts that may carry a
    /// secret — its user information (`user:password@`) and its query (`?token=…`, a pre-signed
    /// URL's signature) — each replaced by `<redacted>`. libcurl is still given the whole URL;
    /// the journal is read by more people than proctord.conf (mode 0600 is the administrator's
    /// to choose), and a status document goes to whichever server `StatusURL=` names.
    ///
    /// Everything from `//` to the last `@` is taken as user information, further than libcurl
    /// reads it (to the first `/`, `?` or `#`): a password written with one of those unescaped
    /// makes a URL that the configuration refuses (`userInformationProblem`), and none of it may
    /// show in the error that says so. When a `?` or `#` comes before that `@`, what follows it
    /// may be the query's, so nothing after `//` is shown. A `file:` URL has no user information.
    /// Bytes, not `Character`s, are compared: a combining mark after `@` does not hide it.
    public static func redacted(_ url: String) -> String {
        let bytes = Array(url.utf8)
        let afterSlashes = authorityStart(bytes)
        var shown = String(decoding: bytes[..<afterSlashes], as: UTF8.self)
        var rest = afterSlashes
        if !url.lowercased().hasPrefix("file:"), let lastAt = bytes[afterSlashes...].lastIndex(of: UInt8(ascii: "@")) {
            guard bytes[afterSlashes..<lastAt].firstIndex(where: isQueryOrFragmentStart) == nil else { return shown + "<redacted>" }
            shown += "<redacted>"
            rest = lastAt
        }
        if let query = bytes[rest...].firstIndex(where: isQueryOrFragmentStart) {
            shown += String(decoding: bytes[rest...query], as: UTF8.self) + "<redacted>"
        } else {
            shown += String(decoding: bytes[rest...], as: UTF8.self)
        }
        return shown
    }

    /// Why libcurl would not read the user information of `url` (an `https://` URL) as written,
    /// or nil. Its authority runs from `//` to the first `/`, `?` or `#` (RFC 3986, and libcurl):
    /// a password with an unescaped `/` would end it early — libcurl then finds no credentials,
    /// refuses the URL, or connects to a host named by the user name and sends the rest of the
    /// password in the path. So `@` may come once, in the authority; anywhere else it is refused.
    static func userInformationProblem(_ url: String) -> String? {
        let bytes = Array(url.utf8.dropFirst("https://".utf8.count))
        let authorityEnd = bytes.firstIndex { $0 == UInt8(ascii: "/") || isQueryOrFragmentStart($0) } ?? bytes.endIndex
        let ats = bytes.indices.filter { bytes[$0] == UInt8(ascii: "@") }
        guard ats.count > 1 || ats.contains(where: { $0 > authorityEnd }) else { return nil }
        return "expected \"@\" only once, after the user name and password: percent-encode \"/\", \"?\", \"#\" and \"@\" "
            + "in them (%2F, %3F, %23, %40) and \"@\" in the path or query (%40), as libcurl ends the host at the first "
            + "\"/\", \"?\" or \"#\""
    }

    /// Where the authority starts: after `SCHEME://`, or at the start when `url` does not begin
    /// so (a `//` further on may be in a password or the path).
    private static func authorityStart(_ url: [UInt8]) -> Int {
        guard let colon = url.firstIndex(of: UInt8(ascii: ":")), colon > 0, url[..<colon].allSatisfy(isSchemeByte),
              url[(colon + 1)...].starts(with: "//".utf8) else { return 0 }
        return colon + 3
    }

    /// RFC 3986: a scheme is letters, digits, `+`, `-` and `.`.
    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    private static func isQueryOrFragmentStart(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") }
}

