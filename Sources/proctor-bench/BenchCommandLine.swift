import Glibc

/// A figure-producing subcommand, listed in `BenchCommandLine.commands`.
protocol BenchCommand: Sendable {
    /// The subcommand's name on the command line.
    static var name: String { get }
    /// One line for `--help`.
    static var summary: String { get }
    /// Measures, handing each figure to `report` as soon as it is known.
    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws
}

/// Options every subcommand understands.
struct BenchOptions {
    /// Print one JSON object per figure instead of a table.
    var json = false
    /// Fewer runs, for a smoke test (`make bench QUICK=1`).
    var quick = false
    /// The proctord the daemon figures start: beside this executable unless `--proctord` says.
    var proctordPath = ""
    /// The CPU proctord and the echo peer are started on (`--peer-cpu`); nil leaves them to
    /// the scheduler. Paired with `taskset -c` on the bench itself, the round trip crosses CPUs
    /// on every call, the floor's as well as `Decide`'s.
    var peerCPU: Int?
}

struct BenchUsageError: Error, CustomStringConvertible {
    let description: String
}

enum BenchCommandLine {
    static let commands: [any BenchCommand.Type] = [
        DecideBench.self, CompileBench.self, RoundTripBench.self, ThroughputBench.self, PushBench.self,
        StartupBench.self, MemoryBench.self, ReloadBench.self, StorageBench.self, BundleBench.self, PollBench.self,
        StatusReportBench.self,
    ]

    static let usage = """
        usage: proctor-bench [COMMAND ...] [--json] [--quick] [--proctord PATH] [--peer-cpu N]
               proctor-bench workload --apps N --count M --out FILE

        Measures Proctor and prints a table of figures (median, p99, runs), or with --json one
        JSON object per figure: {"name","unit","median","p99","runs"}. Without a command, runs all.
        The daemon figures start a real proctord on temporary directories.
        `workload` writes the in-process workload's apps, queries and Proctor's answers as JSON,
        for bench/engines.py to evaluate in Cedar and Rego.

        commands:
        \(commands.map { "  \(TextColumns.left($0.name, 12))\($0.summary)" }.joined(separator: "\n"))

        options:
          --json            one JSON object per line instead of the table
          --quick           fewer runs (a smoke test, not a measurement)
          --proctord PATH   the daemon to measure (default: proctord beside this executable)
                            or a wrapper that execs it (a profiler): READY=1 must come
                            from the process the bench starts
          --peer-cpu N      start proctord and the echo peer confined to CPU N
          --help            this text
        """

    /// Runs the command line and returns the exit status: 0 done, 1 a benchmark failed, 2 bad usage.
    static func run(_ arguments: [String]) -> Int32 {
        if arguments.first == EchoPeer.argument, arguments.count == 4, let kind = EchoPeer.Kind(rawValue: arguments[1]),
           let request = Int(arguments[2]), let reply = Int(arguments[3]) {
            return EchoPeer.serve(kind, requestSize: request, replySize: reply)
        }
        if arguments.first == WorkloadExport.name {
            do {
                return try WorkloadExport.run(Array(arguments.dropFirst()))
            } catch let error as BenchUsageError {
                printError("proctor-bench: \(error)")
                return 2
            } catch {
                printError("proctor-bench: \(error)")
                return 1
            }
        }
        var options = BenchOptions()
        options.proctordPath = ((try? BenchDaemonWorkload.executablePath()).map { path in
            String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        } ?? ".") + "/proctord"
        var selected: [any BenchCommand.Type] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--json": options.json = true
            case "--quick": options.quick = true
            case "--proctord":
                guard let path = remaining.popFirst() else {
                    printError("proctor-bench: --proctord needs a path")
                    return 2
                }
                options.proctordPath = path
            case "--peer-cpu":
                guard let cpu = remaining.popFirst().flatMap({ Int($0) }), (0..<1024).contains(cpu) else {
                    printError("proctor-bench: --peer-cpu needs a CPU number (0–1023)")
                    return 2
                }
                options.peerCPU = cpu
            case "--help", "-h":
                print(usage)
                return 0
            default:
                guard let command = commands.first(where: { $0.name == argument }) else {
                    printError("proctor-bench: unknown command or option '\(argument)' (try --help)")
                    return 2
                }
                selected.append(command)
            }
        }
        if selected.isEmpty { selected = commands }
        let report = FigureReport(json: options.json)
        report.start()
        do {
            for command in selected {
                try command.run(options) { report.add($0) }
            }
        } catch {
            printError("proctor-bench: \(error)")
            return 1
        }
        return 0
    }

    static func printError(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
