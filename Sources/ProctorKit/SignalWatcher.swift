import CLinux
import Dispatch
import Glibc

/// The single owner of the process's lifecycle signals.
///
/// It blocks the signals in the calling thread — so in every thread started afterwards,
/// which is why `ApplicationMain` creates it before anything else — and reads them from a
/// `signalfd` on the main queue. Blocked signals stay pending for the descriptor instead of
/// running a default action in whichever thread the kernel picks.
@MainActor
final class SignalWatcher {
    /// SIGTERM, SIGINT, SIGHUP, SIGTSTP and SIGCONT.
    static let lifecycleSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGTSTP, SIGCONT]

    private let descriptor: Int32
    private var source: (any DispatchSourceRead)?

    init(signals: [Int32] = SignalWatcher.lifecycleSignals) throws(SystemCallError) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        let result = pthread_sigmask(SIG_BLOCK, &mask, nil)
        guard result == 0 else { throw SystemCallError(call: "pthread_sigmask", errno: result) }
        let descriptor = signalfd(-1, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC))
        guard descriptor >= 0 else { throw .last("signalfd") }
        self.descriptor = descriptor
    }

    /// Calls `handler` on the main actor with each signal's number, in arrival order.
    func start(handler: @escaping @MainActor (Int32) -> Void) {
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .main)
        let descriptor = self.descriptor
        source.setEventHandler {
            MainActor.assumeIsolated {
                for signal in Self.drain(descriptor) { handler(signal) }
            }
        }
        source.resume()
        self.source = source
    }

    /// Reads every pending signal; a non-blocking descriptor ends the loop with EAGAIN.
    private static func drain(_ descriptor: Int32) -> [Int32] {
        var signals: [Int32] = []
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        while true {
            let count = read(descriptor, &info, size)
            if count == size {
                signals.append(Int32(bitPattern: info.ssi_signo))
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return signals
            }
        }
    }
}
