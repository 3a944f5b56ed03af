import Glibc

/// The scheduling priority of the calling thread (on Linux, `nice` belongs to each thread).
public enum ThreadPriority {
    /// Lowers the calling thread's priority to `nice` unless it is that low already. Without
    /// `CAP_SYS_NICE` a thread cannot raise it again, so call this only from threads that do
    /// background work for the rest of their life, such as a daemon's pool of workers.
    public static func lowerCurrentThread(toNice nice: Int32) {
        guard let current = currentNice, current < nice else { return }
        _ = setpriority(which, thread, nice)
    }

    /// The calling thread's `nice`, nil if it cannot be read: for work handed to another
    /// thread that must not run at a higher priority than the thread that hands it over.
    public static var currentNice: Int32? {
        errno = 0
        let current = getpriority(which, thread)
        return errno == 0 ? current : nil
    }

    // `who` 0 is the calling thread itself: Linux applies PRIO_PROCESS to one task.
    private static let thread: id_t = 0
    private static let which = __priority_which_t(PRIO_PROCESS.rawValue)
}
