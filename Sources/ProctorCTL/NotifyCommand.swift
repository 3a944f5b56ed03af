import JSONCore
import ProctorProtocol

/// `proctorctl notify APP JSON`: pushes an MDM command to an app's sessions.
enum NotifyCommand {
    static let verb = Verb(
        words: ["notify"],
        summary: "push a JSON command to an app's sessions",
        argumentsSynopsis: "APP JSON",
        positionalCount: 2...2,
        options: [.value("--ttl", "DURATION", help: "How long the command waits for APP when no session of it is "
                      + "subscribed now: seconds, or a number with s, m, h or d (90s, 30m, 24h, 7d); at most 30d. The "
                      + "default is 24h; 0 does not queue it.")]
            + AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.Notify) to push the JSON object JSON to every session of APP subscribed "
                + "to its changes, where it arrives as didReceiveRemoteNotification. What the object means is up to the "
                + "app. Prints how many sessions received it.",
            "When none did (the app is not running), proctord queues the command in its state directory and delivers "
                + "it when the app next registers and subscribes, unless --ttl runs out first; the command then prints "
                + "until when it is queued. At most 100 commands wait per app.",
        ],
        exitStatuses: AdminClient.exitStatuses(
            success: "The push was handed to every subscribed session, or queued for the app's next registration.",
            invalidInput: "JSON is not a JSON object, --ttl is not a duration of at most 30d, or the command line is wrong.",
            refused: "proctord refused: permission denied, no such app, or 100 commands already wait for it."),
        examples: [
            ("proctorctl notify com.example.mail '{\"command\": \"sync\"}'", "Ask the mail app to sync now."),
            ("proctorctl notify --ttl 7d com.example.mail '{\"command\": \"rotate-keys\"}'",
             "Have the mail app rotate its keys, at its next start if it is not running, within a week."),
        ],
        run: run)

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let app = arguments.positionals[0]
        let payload: JSONValue
        do {
            payload = try JSONParser.parse(arguments.positionals[1])
        } catch {
            throw .usage(UsageError("the payload JSON is not valid JSON: \(error)"))
        }
        guard payload.objectValue != nil else {
            throw .usage(UsageError("the payload JSON must be a JSON object, found \(payload.typeDescription)"))
        }
        let ttlSeconds = try arguments.value("--ttl").map { text throws(CommandFailure) in try seconds(text) }
        return try AdminClient(arguments, context: context)
            .call(Admin.Notify.self, Admin.Notify.Request(appId: app, payload: payload.objectValue ?? [:], ttlSeconds: ttlSeconds))
            .print(arguments, on: context.console) { reply in
                if let until = reply.queuedUntil {
                    return ["queued: no session of \(app) is subscribed; delivered at its next registration "
                        + "until \(LocalTime.format(until))"]
                }
                if reply.delivered == 0 {
                    return ["no session of \(app) is subscribed: nobody received it (--ttl 0: not queued)"]
                }
                return ["delivered to \(reply.delivered) session\(reply.delivered == 1 ? "" : "s") of \(app)"]
            }
    }

    /// `--ttl`: seconds, or a number with `s`, `m`, `h` or `d`; at most `Admin.Notify.maxTTLSeconds`.
    static func seconds(_ text: String) throws(CommandFailure) -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let unit = text.last.flatMap { units[$0] }
        let number = unit == nil ? Substring(text) : text.dropLast()
        guard !number.isEmpty, number.allSatisfy(\.isASCII), let value = Int(number),
              value >= 0, value <= Admin.Notify.maxTTLSeconds / (unit ?? 1) else {
            throw .usage(UsageError("--ttl must be a duration such as 90s, 30m, 24h or 7d, of at most 30d; found \"\(text)\""))
        }
        return value * (unit ?? 1)
    }
}
