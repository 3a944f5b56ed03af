// proctor-bench: measures Proctor's figures. The commands are listed in BenchCommandLine.swift.
import Glibc

exit(BenchCommandLine.run(Array(CommandLine.arguments.dropFirst())))
