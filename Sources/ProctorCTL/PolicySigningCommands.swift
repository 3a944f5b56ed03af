import Glibc
import JSONCore
import ProctorBundle
import ProctorCrypto
import ProctorPolicy

/// `proctorctl policy keygen|sign`: the MDM side of signed bundles. Offline: they need only
/// the key files and the policy, never proctord.
enum PolicySigningCommands {
    /// A bundle's life when `--expires-in` is not given: 30 days.
    static let defaultLifetime = 30 * 24 * 3600

    static let keygenVerb = Verb(
        words: ["policy", "keygen"],
        summary: "make a key pair for signing policy bundles",
        argumentsSynopsis: "",
        positionalCount: 0...0,
        options: [.value("--out", "PREFIX", help: "Write the private key to PREFIX (mode 0600) and the public key to "
                      + "PREFIX.pub (mode 0644). Required. Neither file may exist already.")],
        description: [
            "Generates a fresh Ed25519 key pair (libsodium). PREFIX holds the private key as one line "
                + "'ed25519-secret KEYID BASE64-SEED'; keep it on the signing machine only. PREFIX.pub holds one line "
                + "'ed25519 KEYID BASE64-KEY': copy it into /etc/proctor/keys.d on every managed machine, whose proctord "
                + "then trusts bundles it signs. KEYID is the first 8 bytes of the key's BLAKE2b-256 hash, in hex.",
            "Prints the key id. Existing files are never overwritten: rotating keys means making a new pair, adding its "
                + ".pub to keys.d beside the old one, signing with the new key, then removing the old .pub.",
        ],
        exitStatuses: [
            (.success, "Both files were written."),
            (.invalidInput, "A file exists or cannot be written, or the command line is wrong."),
        ],
        examples: [("proctorctl policy keygen --out /srv/mdm/keys/2026", "Make /srv/mdm/keys/2026 and /srv/mdm/keys/2026.pub.")],
        run: keygen)

    static let signVerb = Verb(
        words: ["policy", "sign"],
        summary: "sign a policy as a bundle proctord verifies",
        argumentsSynopsis: "FILE",
        positionalCount: 1...1,
        options: [
            .value("--key", "PREFIX", help: "The private key file written by 'policy keygen --out PREFIX'. Required."),
            .value("--serial", "N", help: "The bundle's serial, a whole number from 1 to 2^53-1 that must grow with every "
                + "bundle: proctord refuses one not greater than the last it applied. Default: the current Unix time."),
            .value("--expires-in", "SECONDS", help: "How long the bundle may be applied, from now; proctord refuses it "
                + "afterwards, so updates cannot be held back unnoticed. Default: 2592000 (30 days)."),
        ],
        description: [
            "Reads FILE as 'policy apply' does (a complete policy, a directory of drop-ins, or - for standard input), "
                + "checks it, and prints on standard output a signed bundle: a first line holding a DSSE envelope (JSON) "
                + "whose Ed25519-signed payload gives serial, issuedAt, expiresAt, the key id and the size and BLAKE2b-256 "
                + "hash-list digest (256 KiB chunks) of the policy, then the policy's canonical form and a newline, the "
                + "exact bytes the digest covers. The format is described in docs/fleet.md.",
            "Publish the bundle at the BundleURL= of proctord.conf, or apply it with 'proctorctl policy apply'.",
        ],
        exitStatuses: [
            (.success, "The bundle was printed."),
            (.invalidInput, "The policy has problems, the key cannot be read, or the command line is wrong."),
        ],
        examples: [
            ("proctorctl policy sign --key /srv/mdm/keys/2026 ./policy.d > /srv/www/proctor/bundle.json",
             "Sign a policy directory and publish the bundle."),
            ("proctorctl policy sign --key k --serial 42 --expires-in 86400 policy.json",
             "Sign with serial 42, valid for one day."),
        ],
        run: sign)

    static func keygen(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let prefix = try required("--out", arguments)
        // Checked first so that a stale PREFIX.pub does not leave a new private key without its public half.
        guard access(prefix + ".pub", F_OK) != 0 else {
            throw .invalidInput(["proctorctl policy keygen: \(prefix).pub exists; keys are never overwritten"])
        }
        do {
            let pair = try SigningKeyPair.generate()
            try pair.save(privateKeyTo: prefix)
            context.console.print("key id \(pair.publicKey.keyID): private key \(prefix), public key \(prefix).pub")
        } catch {
            throw .invalidInput(["proctorctl policy keygen: \(error)"])
        }
        return .success
    }

    static func sign(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let keyPath = try required("--key", arguments)
        let now = Int(time(nil))
        let serial = try integer("--serial", arguments, default: now, range: 1...((1 << 53) - 1))
        let lifetime = try integer("--expires-in", arguments, default: defaultLifetime, range: 1...(100 * 365 * 24 * 3600))
        let policy = try PolicyInput.loadForCommand(arguments.positionals[0]).policy
        let key: SigningKeyPair
        do { key = try SigningKeyPair.load(privateKeyFrom: keyPath) }
        catch { throw .invalidInput(["proctorctl policy sign: \(error)"]) }
        let bundle = SignedBundle.sign(policy, serial: serial, issuedAt: now, expiresAt: now + lifetime, with: key)
        context.console.print(String(decoding: bundle.dropLast(), as: UTF8.self))  // print adds the newline back
        return .success
    }

    private static func required(_ option: String, _ arguments: ParsedArguments) throws(CommandFailure) -> String {
        guard let value = arguments.value(option) else { throw .usage(UsageError("\(option) is required")) }
        return value
    }

    private static func integer(_ option: String, _ arguments: ParsedArguments, default: Int,
                                range: ClosedRange<Int>) throws(CommandFailure) -> Int {
        guard let text = arguments.value(option) else { return `default` }
        guard let value = Int(text), range.contains(value) else {
            throw .usage(UsageError("\(option) expects a whole number from \(range.lowerBound) to \(range.upperBound), "
                + "found '\(text)'"))
        }
        return value
    }
}
