import Dispatch
import Glibc

/// Work that runs for a long time on a thread of its own: a detached POSIX thread (rather
/// than Foundation's `Thread`, so a daemon does not load Foundation for one thread). Should no
/// thread be available, a Dispatch worker runs it instead.
public enum DetachedThread {
    public static func start(_ body: @escaping @Sendable () -> Void) {
        guard startIfPossible(body) else {
            DispatchQueue.global(qos: .utility).async(execute: body)
            return
        }
    }

    /// Starts `body` on a new detached thread; false when none could be created (too many
    /// threads, no memory), and then `body` was not run.
    static func startIfPossible(_ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        // Detached from its creation, not by `pthread_detach` after it: AddressSanitizer
        // records a thread created joinable as joinable for good (its `pthread_detach`
        // does not tell its thread registry), so once the thread ends, its record stays,
        // with its kernel thread id. When the kernel gives that id to a later thread (ids
        // wrap at pid_max, 32768, within minutes on a busy machine), LeakSanitizer looks the
        // live thread up by id, finds the dead one's record first and scans neither its stack
        // nor its registers: what only that thread holds (a logger's drainer) is "leaked".
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, { raw in
            Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, context)
        pthread_attr_destroy(&attributes)
        guard status == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            return false
        }
        return true
    }

    /// `startIfPossible` for a thread that serves the process in the background (a worker):
    /// every asynchronous signal blocked, as libdispatch's workers have them, so that a signal
    /// sent to the process (SIGTERM, SIGHUP) goes to a thread that handles it, never to this
    /// one, where its default action would end the process. What a fault raises on the thread
    /// itself stays unblocked, and so does `Landlock.threadSignal`, which restricting every
    /// thread sends each one. Blocked around the creation, so that the thread has them blocked
    /// from its first instruction.
    static func startWithSignalsBlocked(_ body: @escaping @Sendable () -> Void) -> Bool {
        var blocked = sigset_t()
        sigfillset(&blocked)
        for kept in [SIGILL, SIGTRAP, SIGFPE, SIGBUS, SIGSEGV, SIGSYS, SIGPIPE, Landlock.threadSignal] {
            sigdelset(&blocked, kept)
        }
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return startIfPossible(body)
    }

    private final class Work: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
