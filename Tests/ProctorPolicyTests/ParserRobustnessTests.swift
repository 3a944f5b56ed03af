import Testing
import ProctorPolicy

/// SplitMix64: a small deterministic generator, so a failure reproduces.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private let sample = Array("""
{
  "schema": 1,
  "version": "2026-11-29.1",
  "defaults": { "dlp": { "clipboard": { "level": "managed", "charLimit": 0 } } },
  "apps": {
    "com.example.notes": {
      "state": "authorized",
      "match": { "executable": "/usr/bin/example-notes", "users": ["*"] },
      "config": { "serverURL": "https://notes.example.com", "syncDays": 14 },
      "dlp": { "share": { "send": "managed", "exempt": ["com.example.*"] }, "fileExport": { "deny": ["/tmp/**"] } },
      "compliance": { "minVersion": "2.3.0", "onViolation": "warn", "offlineGraceSeconds": 86400 }
    }
  }
}
""".utf8)

/// Every outcome of parsing `bytes` must be a fragment or problems that each have a place
/// inside the document and a message.
private func checkOutcome(_ bytes: [UInt8]) {
    let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).count
    do {
        _ = try PolicyFragment.parse(bytes, source: "fuzz.json")
    } catch {
        #expect(!error.problems.isEmpty)
        for problem in error.problems {
            #expect(!problem.message.isEmpty)
            let location = problem.location
            #expect(location != nil, "\(problem)")
            #expect((location?.line ?? 0) >= 1 && (location?.line ?? 0) <= lines, "\(problem)")
        }
    }
}

@Suite struct ParserRobustnessTests {
    @Test func theSampleIsValid() throws {
        #expect(try PolicyFragment.parse(sample, source: nil).apps.count == 1)
    }

    @Test func everyTruncationIsReportedWithAPlace() {
        for length in 0..<sample.count { checkOutcome(Array(sample[..<length])) }
    }

    @Test func randomMutationsNeverCrashAndAlwaysExplain() {
        var generator = SplitMix64(state: 0x5EED)
        let tokens: [[UInt8]] = ["{", "}", "[", "]", ",", ":", "\"", "\\", "null", "-1", "1e999", "\"x\"", "\u{FF}", "\u{0}", "**"]
            .map { Array($0.utf8) }
        for _ in 0..<3000 {
            var bytes = sample
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: position)
                default: bytes.insert(contentsOf: tokens.randomElement(using: &generator)!, at: position)
                }
            }
            checkOutcome(bytes)
        }
    }
}
