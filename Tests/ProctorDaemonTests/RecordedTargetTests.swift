@testable import ProctorDaemon
import Testing

/// The target a decision's log line and event keep, made from the call's bytes
/// (`Daemon.recordedTarget`): whole up to `maxRecordedTargetBytes`, else cut after whole characters.
@Suite struct RecordedTargetTests {
    private static func recorded(_ target: String) -> String {
        Array(target.utf8).withUnsafeBufferPointer(Daemon.recordedTarget).string
    }

    @Test func aTargetWithinTheLimitIsKeptWhole() {
        let limit = Daemon.maxRecordedTargetBytes
        for target in ["", "com.example.notes", "/home/ü/€ 𝄞.txt", String(repeating: "a", count: limit),
                       String(repeating: "a", count: limit - 3) + "€"] {
            #expect(Self.recorded(target) == target)
        }
    }

    /// Cut at the limit, or before it where the limit falls inside a character.
    @Test(arguments: 0...4)
    func aLongerTargetIsCutAfterItsLastWholeCharacterWithin(_ offset: Int) {
        let limit = Daemon.maxRecordedTargetBytes
        let head = String(repeating: "a", count: limit - offset)
        let target = head + String(repeating: "𝄞", count: 2)
        let kept = offset == 4 ? head + "𝄞" : head
        #expect(Self.recorded(target) == kept + "\u{2026} (\(target.utf8.count) bytes)")
    }
}
