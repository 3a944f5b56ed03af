import Foundation
import Glibc

/// Memory pressure from the kernel's pressure stall information (PSI).
///
/// A trigger written to `/proc/pressure/memory` makes the descriptor report `POLLPRI` when
/// tasks stall on memory for longer than the threshold within the window. Dispatch cannot
/// wait for `POLLPRI`, so a small dedicated thread polls and hands each event on.
enum MemoryPressureMonitor {
    /// Some task stalled on memory for 150 ms within a 1 s window.
    static let defaultTrigger = "some 150000 1000000"

    /// Arms the trigger and starts the waiting thread, which calls `onPressure` at most once
    /// per window (the kernel rate-limits triggers). Throws when PSI is unavailable: no
    /// `/proc/pressure`, a kernel without PSI, or no permission to create a trigger.
    static func start(path: String = "/proc/pressure/memory",
                      trigger: String = defaultTrigger,
                      onPressure: @escaping @Sendable () -> Void) throws(SystemCallError) {
        let descriptor = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .last("open \(path)") }
        // The kernel parses the trigger as a C string: the terminating NUL is part of the write.
        let written = trigger.withCString { write(descriptor, $0, strlen($0) + 1) }
        guard written >= 0 else {
            let error = SystemCallError.last("write trigger to \(path)")
            close(descriptor)
            throw error
        }
        let thread = Thread {
            waitForPressure(on: descriptor, onPressure: onPressure)
        }
        thread.name = "memory-pressure"
        thread.start()
    }

    /// Polls until the trigger is gone (`POLLERR`, e.g. the cgroup went away).
    private static func waitForPressure(on descriptor: Int32, onPressure: @Sendable () -> Void) {
        var event = pollfd(fd: descriptor, events: Int16(POLLPRI), revents: 0)
        while true {
            event.revents = 0
            let ready = poll(&event, 1, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if event.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { break }
            if event.revents & Int16(POLLPRI) != 0 { onPressure() }
        }
        close(descriptor)
    }
}
