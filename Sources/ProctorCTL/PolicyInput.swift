import Glibc
import ProctorPolicy

/// Reads the policy a command line names, exactly as proctord would: a directory like
/// `policy.d` (its `*.json` drop-ins merged in lexical order), a file as one complete
/// policy, `-` as a complete policy on standard input. Problems name files by their path.
enum PolicyInput {
    /// The policy at `path` and the paths of the files it came from, in merge order.
    static func load(_ path: String) throws(PolicyProblems) -> LoadedPolicy {
        if isDirectory(path) {
            do {
                let loaded = try PolicyDirectory.load(path)
                return LoadedPolicy(policy: loaded.policy, sources: loaded.sources.map { join(path, $0) })
            } catch {
                // Name each file by its path, so editors and terminals can open it.
                throw PolicyProblems(error.problems.map { problem in
                    var problem = problem
                    if let source = problem.source, !source.contains("/") { problem.source = join(path, source) }
                    return problem
                })
            }
        }
        let (bytes, source) = try readFile(path)
        return LoadedPolicy(policy: try Policy.parse(bytes, source: source), sources: [source])
    }

    /// The bytes of the file `path` (`-`: standard input) and the name problems give it.
    static func readFile(_ path: String, limit: Int = PolicyLimits.maxDocumentBytes)
        throws(PolicyProblems) -> (bytes: [UInt8], source: String) {
        let source = path == "-" ? "<stdin>" : path
        return (try PolicyFile.read(path == "-" ? "/dev/stdin" : path, source: source, limit: limit), source)
    }

    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// `load`, with problems as an invalid-input failure (exit 2), one line per problem.
    static func loadForCommand(_ path: String) throws(CommandFailure) -> LoadedPolicy {
        do {
            return try load(path)
        } catch {
            throw .invalidInput(error.problems.map(\.description))
        }
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
