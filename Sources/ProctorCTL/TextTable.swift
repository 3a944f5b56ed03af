/// Rows printed in aligned columns under a header, two spaces apart; lines carry no
/// trailing blanks.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: String...) { self.header = header }

    var lines: [String] {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            var line = row.enumerated().map { column, cell in
                cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}

/// Labelled lines, `label:` padded so the values line up, with unlabelled detail lines
/// (indented two spaces) where they belong.
struct FieldList {
    private var fields: [(label: String?, value: String)] = []

    mutating func add(_ label: String, _ value: String) { fields.append((label, value)) }

    /// A line printed as it is, indented two spaces, under the field before it.
    mutating func addDetail(_ line: String) { fields.append((nil, line)) }

    var lines: [String] {
        let width = (fields.compactMap(\.label?.count).max() ?? 0) + 1
        return fields.map { field in
            guard let label = field.label else { return "  " + field.value }
            if field.value.isEmpty { return label + ":" }
            return label + ":" + String(repeating: " ", count: width - label.count + 1) + field.value
        }
    }
}
