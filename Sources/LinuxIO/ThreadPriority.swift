import CLinux
import Glibc

/// The scheduling priority of the calling thread (on Linux, `nice` belongs to each thread).
public enum ThreadPriority {
    /// Lowers the calling thread's priority to `nice` unless it is that low already. Without
    /// `CAP_SYS_NICE` a thread cannot raise it again, so call this only from threads that do
    /// background work for the rest of their life, such as a daemon's pool of workers.
    ///
    /// A thread lowered so also leaves one of its CPUs (when it may run on two or more) to
    /// the threads it made way for: on a kernel without full preemption a woken thread of
    /// normal priority (proctord's event loop) still waited for the scheduler's next tick,
    /// 4 ms at `HZ=250`, while lowered threads held every CPU, whatever their priority.
    public static func lowerCurrentThread(toNice nice: Int32) {
        guard let current = currentNice, current < nice else { return }
        _ = setpriority(which, thread, nice)
        leaveOneCPU()
    }

    /// The CPUs the calling thread may run on (`sched_getaffinity(2)`).
    public static var currentCPUs: [Int] {
        var mask = cpu_set_t()
        let filled = withUnsafeMutableBytes(of: &mask) { clinux_get_affinity($0.baseAddress, $0.count) }
        guard filled > 0 else { return [] }
        return withUnsafeBytes(of: mask) { bytes in
            (0..<Int(filled) * 8).filter { bytes[$0 / 8] & (1 << UInt8($0 % 8)) != 0 }
        }
    }

    /// Takes the first of the calling thread's CPUs out of its affinity, unless it has one only.
    /// (The mask has CPU `n` at bit `n % 8` of byte `n / 8`.)
    private static func leaveOneCPU() {
        let cpus = currentCPUs
        guard cpus.count >= 2 else { return }
        var mask = cpu_set_t()
        withUnsafeMutableBytes(of: &mask) { bytes in
            for cpu in cpus.dropFirst() { bytes[cpu / 8] |= 1 << UInt8(cpu % 8) }
            _ = clinux_set_affinity(bytes.baseAddress, bytes.count)
        }
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
