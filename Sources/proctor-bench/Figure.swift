import Glibc
import JSONCore

/// One measured figure: the median and 99th percentile of `runs` samples.
struct Figure {
    let name: String
    let unit: String
    let median: Double
    let p99: Double
    let runs: Int

    /// The figure of `samples` (at least one).
    init(name: String, unit: String, samples: [Double]) {
        precondition(!samples.isEmpty, "a figure needs samples")
        let sorted = samples.sorted()
        self.name = name
        self.unit = unit
        median = Figure.percentile(sorted, 0.5)
        p99 = Figure.percentile(sorted, 0.99)
        runs = samples.count
    }

    /// Nearest-rank percentile of sorted samples.
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[max(0, min(sorted.count - 1, rank - 1))]
    }

    var json: JSONValue {
        ["name": .string(name), "unit": .string(unit), "median": .number(median), "p99": .number(p99), "runs": .number(runs)]
    }
}

/// Prints figures as they arrive: table rows, or JSON lines.
struct FigureReport {
    let json: Bool

    func start() {
        guard !json else { return }
        print(row("figure", "median", "p99", "unit", "runs"))
        print(String(repeating: "-", count: 78))
    }

    func add(_ figure: Figure) {
        if json {
            print(figure.json.serializedString())
        } else {
            print(row(figure.name, Self.format(figure.median), Self.format(figure.p99), figure.unit, String(figure.runs)))
        }
        fflush(nil)
    }

    private func row(_ name: String, _ median: String, _ p99: String, _ unit: String, _ runs: String) -> String {
        TextColumns.left(name, 36) + TextColumns.right(median, 12) + TextColumns.right(p99, 12) + "  "
            + TextColumns.left(unit, 6) + TextColumns.right(runs, 8)
    }

    private static func format(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(Double(Int(value * 10)) / 10)
    }
}

/// Fixed-width columns for the table.
enum TextColumns {
    static func left(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    static func right(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
