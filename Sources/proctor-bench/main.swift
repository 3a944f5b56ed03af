// proctor-bench: measures Proctor's figures. The commands live in BenchCommands.swift.
import Glibc

exit(BenchCommandLine.run(Array(CommandLine.arguments.dropFirst())))
