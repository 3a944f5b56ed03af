import LinuxIO
import ProctorPolicy

/// Compile time of a 10 000-app policy that uses every rule kind.
enum CompileBench: BenchCommand {
    static let name = "compile"
    static let summary = "policy compile time (ms) for 10 000 apps using every rule kind"
    static let appCount = 10_000

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        let synthetic = SyntheticPolicy(appCount: appCount)
        let runs = options.quick ? 5 : 30
        var samples: [Double] = []
        var managed = 0
        for _ in 0..<runs {
            let began = MonotonicClock.nanoseconds()
            let engine = CompiledPolicy(synthetic.policy)
            samples.append(Double(MonotonicClock.nanoseconds() - began) / 1_000_000)
            managed &+= engine.isManaged(SyntheticPolicy.appID(0)) ? 1 : 0
        }
        if managed == Int.min { print(managed) }
        report(Figure(name: "compile.apps\(appCount)", unit: "ms", samples: samples))
    }
}
