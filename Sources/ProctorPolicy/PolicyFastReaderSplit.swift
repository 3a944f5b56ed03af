import Dispatch
import Glibc
import JSONCore
import LinuxIO
import Synchronization

/// One large policy file's `apps` read on two threads: a start with a single `policy.d` file
/// of 10 000 apps otherwise parses on one CPU while the other idles.
///
/// Where the second half begins is a guess: a place near the middle of the bytes that looks
/// like the space between two members of `apps` (`}`, `,`, a quoted app id, `:`, `{`), from
/// which another thread reads members to the end of the object. Only the first reader can
/// tell whether the guess was right: it was when that reader, reading member after member,
/// arrives exactly there — then it is in the state the other thread began in (between two
/// members of `apps`, inside the root object), and reading on would read what the other
/// thread read. Otherwise (a `}` inside a string or a nested object, a problem anywhere) the
/// other thread's work is dropped and the first reader reads on alone, so what is accepted,
/// and every fallback to the validating reader, are the same as without the split.
final class AppsSplit: Sendable {
    /// Below this many bytes a document is read on one thread: waking another costs more
    /// than it saves.
    static let minimumBytes = 512 * 1024
    /// How far past the middle to look for a boundary.
    static let searchBytes = 64 * 1024

    private static let hasSeveralCPUs = sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1

    let bytes: [UInt8]
    /// The offset right after the `}` of the app that ends the first half.
    let boundary: Int
    private let state = Atomic<Int>(State.pending)
    private let outcome = Mutex<(apps: [AppID: AppPolicy], end: Int)?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    private enum State {
        static let pending = 0, running = 1, finished = 2, abandoned = 3
    }

    /// The second half started on another thread, or nil when `bytes` are too few to split,
    /// there is one CPU, or no boundary is found near the middle.
    static func start(_ bytes: [UInt8]) -> AppsSplit? {
        guard bytes.count >= minimumBytes, hasSeveralCPUs, let boundary = guessBoundary(in: bytes) else { return nil }
        let split = AppsSplit(bytes, boundary: boundary)
        // At the reader's priority (`WorkerPool.run`): a reload's reader runs at a lower one
        // than the event loop.
        WorkerPool.shared.run { split.readSecondHalf() }
        return split
    }

    private init(_ bytes: [UInt8], boundary: Int) {
        self.bytes = bytes
        self.boundary = boundary
    }

    /// How many apps the whole document likely holds, `count` having been read in its first
    /// `offset` bytes (the `apps` object is nearly all of a large policy file), with an eighth
    /// more for apps larger early than late; at most `PolicyLimits.maxApps`.
    func expectedApps(read count: Int, upTo offset: Int) -> Int {
        min(PolicyLimits.maxApps, count * bytes.count / max(offset, 1) + count / 8)
    }

    /// The apps of the second half and a reader past the end of `apps`, waiting for the
    /// other thread if it is still reading; nil when it found a problem or has not begun
    /// (on a busy machine: then reading on costs no more than waiting would).
    func join() -> (apps: [AppID: AppPolicy], json: JSONPullReader)? {
        guard !state.compareExchange(expected: State.pending, desired: State.abandoned, ordering: .acquiringAndReleasing).exchanged else {
            return nil
        }
        finished.wait()
        guard let (apps, end) = outcome.withLock({ $0 }) else { return nil }
        return (apps, JSONPullReader(bytes, maxDepth: PolicyLimits.maxNestingDepth, resumingAt: end, openObjects: 1))
    }

    /// Whether the other thread has taken up the second half (or it was abandoned first).
    var hasBegun: Bool { state.load(ordering: .acquiring) != State.pending }

    /// The first reader will not use the second half: stop it, or keep it from beginning.
    func abandon() {
        var current = state.load(ordering: .acquiring)
        while current == State.pending || current == State.running {
            let (exchanged, seen) = state.compareExchange(expected: current, desired: State.abandoned, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = seen
        }
    }

    private func readSecondHalf() {
        guard state.compareExchange(expected: State.pending, desired: State.running, ordering: .acquiringAndReleasing).exchanged else { return }
        // Inside two objects, each past a member: the root (`apps` is one) and `apps`.
        var reader = PolicyFastReader(json: JSONPullReader(bytes, maxDepth: PolicyLimits.maxNestingDepth, resumingAt: boundary, openObjects: 2))
        let result = try? reader.readRemainingApps { state.load(ordering: .relaxed) == State.abandoned }
        outcome.withLock { $0 = result ?? nil }
        _ = state.compareExchange(expected: State.running, desired: State.finished, ordering: .acquiringAndReleasing)
        finished.signal()
    }

    /// The first place at or after the middle of `bytes` (within `searchBytes`) where a `}` is
    /// followed by `,`, a quoted app id without escapes, `:` and `{` (white space allowed
    /// between them): the offset right after that `}`.
    static func guessBoundary(in bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { bytes in
            var index = bytes.count / 2
            let limit = min(bytes.count, index + searchBytes)
            while index < limit {
                defer { index += 1 }
                guard bytes[index] == UInt8(ascii: "}") else { continue }
                var next = skipWhitespace(bytes, from: index + 1)
                guard next < bytes.count, bytes[next] == UInt8(ascii: ",") else { continue }
                next = skipWhitespace(bytes, from: next + 1)
                guard next < bytes.count, bytes[next] == UInt8(ascii: "\"") else { continue }
                let keyStart = next + 1
                var keyEnd = keyStart
                while keyEnd < bytes.count, keyEnd - keyStart <= PolicyLimits.maxAppIDBytes,
                      bytes[keyEnd] != UInt8(ascii: "\""), bytes[keyEnd] != UInt8(ascii: "\\") {
                    keyEnd += 1
                }
                guard keyEnd < bytes.count, bytes[keyEnd] == UInt8(ascii: "\""),
                      PolicySyntax.isAppID(String(decoding: UnsafeBufferPointer(rebasing: bytes[keyStart..<keyEnd]), as: UTF8.self))
                else { continue }
                next = skipWhitespace(bytes, from: keyEnd + 1)
                guard next < bytes.count, bytes[next] == UInt8(ascii: ":") else { continue }
                next = skipWhitespace(bytes, from: next + 1)
                guard next < bytes.count, bytes[next] == UInt8(ascii: "{") else { continue }
                return index + 1
            }
            return nil
        }
    }

    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }
}
