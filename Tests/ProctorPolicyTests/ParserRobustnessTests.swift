import Testing
import ProctorPolicy
import TestSupport

private let sample = Array(PolicyTestSupport.notesPolicy.utf8)

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
        var generator = SeededGenerator(seed: 0x5EED)
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
