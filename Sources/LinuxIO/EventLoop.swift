import CLinux
import Glibc
import Synchronization

/// What a registration wants to hear about.
public struct Interest: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data (or a pending connection, or end of file) can be read.
    public static let readable = Interest(rawValue: EPOLLIN.rawValue)
    /// Data can be written without blocking.
    public static let writable = Interest(rawValue: EPOLLOUT.rawValue)
}

/// What a descriptor is ready for, as epoll reported it.
public struct Readiness: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data, a connection or end of file is there to read.
    public static let readable = Readiness(rawValue: EPOLLIN.rawValue)
    /// Writing will not block.
    public static let writable = Readiness(rawValue: EPOLLOUT.rawValue)
    /// The peer hung up (reported whatever the interest).
    public static let hangup = Readiness(rawValue: EPOLLHUP.rawValue)
    /// An error is pending on the descriptor (reported whatever the interest).
    public static let error = Readiness(rawValue: EPOLLERR.rawValue)
}

/// A descriptor registered with an `EventLoop`; pass it back to `modify` and `unregister`.
public struct Registration: Hashable, Sendable {
    /// The registered descriptor.
    public let descriptor: FileDescriptor
    let slot: Int
    let generation: UInt32
}

/// A scheduled timer; pass it to `EventLoop.cancel(_:)`.
public struct TimerHandle {
    let entry: TimerEntry
}

/// A single-threaded event loop over epoll: descriptor readiness, timers, signals and work
/// handed over from other threads, all dispatched on the one thread that calls `run()`.
///
/// Threading: every method except `execute(_:)` must be called on the loop's thread — the
/// thread running `run()`, or before `run()` the thread that set the loop up. Handlers run on
/// that thread, one at a time, so they need no locks. A handler that blocks stops the whole
/// loop, timers included (a watchdog ping scheduled with `schedule(every:)` then stops too,
/// which is what a watchdog is for).
///
/// Timers live in a heap inside the loop and bound `epoll_wait`'s timeout (rounded up to the
/// next millisecond, so a timer never fires early). That costs no system call to schedule or
/// cancel, which matters because connections re-arm their timeouts all the time; a timerfd
/// would need a `timerfd_settime` each time the earliest deadline changes.
public final class EventLoop: @unchecked Sendable {
    private struct Slot {
        var descriptor: FileDescriptor
        var generation: UInt32
        var handler: Handler?
    }

    /// A registration's handler in an object of its own, whose constant closure `run()`
    /// borrows, reached unretained: read from its slot, the closure was retained and released
    /// around every event, two atomic operations.
    private final class Handler {
        let call: (Readiness) -> Void
        init(_ call: @escaping (Readiness) -> Void) { self.call = call }
    }

    /// The epoll instance (internal so tests can read what it watches in /proc/self/fdinfo).
    let epoll: FileDescriptor
    private let wakeUp: FileDescriptor
    /// Read for every event; changed only through `updateSlots(_:)`, so that no exclusive
    /// access to the property spans a call and it needs no run-time exclusivity check.
    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    /// Set while `run()` calls a handler: handlers unregistered meanwhile (the running one,
    /// perhaps) are kept in `unregisteredHandlers` until it returns.
    private var isDispatching = false
    private var unregisteredHandlers: [Handler] = []
    private var timers = TimerQueue()
    /// The earliest timer's deadline (`UInt64.max` when none), kept beside the queue so that
    /// an iteration with no timer due reads one integer, not the queue.
    private var nextDeadline = UInt64.max
    private var stopRequested = false
    private var loopThread: pthread_t?
    private let handedOver = Mutex<[@Sendable () -> Void]>([])
    private var signalDescriptor: FileDescriptor?
    private var signalHandlers: [CInt: (CInt) -> Void] = [:]
    private let events: UnsafeMutablePointer<epoll_event>
    private let eventCapacity = 256

    /// A read buffer shared by every connection of this loop: handlers run one at a time, so
    /// one buffer serves all of them and an idle connection holds none.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// The reads with sender credentials this loop's connections made so far, numbered across
    /// all of them (`SenderCredentials.receipt`): a look at processes after read N then
    /// answers for every connection's reads up to N (`ProcessExitWatch`).
    var readsReceived: UInt64 = 0

    /// Creates the epoll instance and the eventfd that `execute(_:)` uses to wake the loop.
    public init() throws(Errno) {
        epoll = FileDescriptor(rawValue: try Syscall.epollCreate())
        do {
            wakeUp = FileDescriptor(rawValue: try Syscall.eventFD())
        } catch {
            try? epoll.close()
            throw error
        }
        events = .allocate(capacity: eventCapacity)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        do {
            _ = try register(wakeUp, events: .readable) { [unowned self] _ in runHandedOverWork() }
        } catch {
            try? wakeUp.close()
            try? epoll.close()
            throw error
        }
    }

    deinit {
        try? wakeUp.close()
        if let signalDescriptor { try? signalDescriptor.close() }
        try? epoll.close()
        events.deallocate()
        readBuffer.deallocate()
    }

    // MARK: descriptors

    /// Watches `descriptor` for `events` (level-triggered) and calls `handler` with what it is
    /// ready for, on the loop's thread, until `unregister`. The loop does not own the
    /// descriptor: unregister it before closing it.
    public func register(_ descriptor: FileDescriptor, events interest: Interest,
                         handler: @escaping (Readiness) -> Void) throws(Errno) -> Registration {
        assertOnLoopThread()
        let free = freeSlots.popLast()
        let registration = updateSlots { slots in
            let slot: Int
            if let free {
                slot = free
                slots[slot].descriptor = descriptor
                slots[slot].generation &+= 1
            } else {
                slot = slots.count
                slots.append(Slot(descriptor: descriptor, generation: 0))
            }
            return Registration(descriptor: descriptor, slot: slot, generation: slots[slot].generation)
        }
        do {
            try Syscall.epollControl(epoll.rawValue, EPOLL_CTL_ADD, descriptor.rawValue,
                                     events: interest.rawValue, data: Self.eventData(registration))
        } catch {
            freeSlots.append(registration.slot)
            throw error
        }
        updateSlots { $0[registration.slot].handler = Handler(handler) }
        return registration
    }

    /// Changes what `registration` listens for (an empty interest still reports hang-ups and
    /// errors).
    public func modify(_ registration: Registration, events interest: Interest) throws(Errno) {
        assertOnLoopThread()
        precondition(isCurrent(registration), "modify of a registration that was unregistered")
        try Syscall.epollControl(epoll.rawValue, EPOLL_CTL_MOD, registration.descriptor.rawValue,
                                 events: interest.rawValue, data: Self.eventData(registration))
    }

    /// Stops watching the descriptor; its handler is never called again, not even for events
    /// already collected in this iteration. Unregistering twice is harmless.
    public func unregister(_ registration: Registration) {
        assertOnLoopThread()
        guard isCurrent(registration) else { return }
        // EPOLL_CTL_DEL fails only if the descriptor was closed already, which removed it.
        try? Syscall.epollControl(epoll.rawValue, EPOLL_CTL_DEL, registration.descriptor.rawValue, events: 0, data: 0)
        let handler = updateSlots { slots in
            slots[registration.slot].generation &+= 1
            return slots[registration.slot].handler.take()
        }
        freeSlots.append(registration.slot)
        // Kept while a handler runs: it may be this one, which `run()` does not retain.
        if isDispatching, let handler { unregisteredHandlers.append(handler) }
        // Taken out, and released only here: releasing it may run its owner's deinit, which
        // may register or unregister, and must not while the slots are moved out.
        _ = consume handler
    }

    /// Changes the slots on a local copy moved out of the property and back (see `slots`).
    private func updateSlots<Result>(_ update: (inout [Slot]) -> Result) -> Result {
        var table: [Slot] = []
        swap(&table, &slots)
        let result = update(&table)
        swap(&table, &slots)
        return result
    }

    private func isCurrent(_ registration: Registration) -> Bool {
        registration.slot < slots.count
            && slots[registration.slot].generation == registration.generation
            && slots[registration.slot].handler != nil
    }

    private static func eventData(_ registration: Registration) -> UInt64 {
        UInt64(registration.generation) << 32 | UInt64(registration.slot)
    }

    // MARK: timers

    /// Calls `action` once on the loop's thread after `delay` (never earlier).
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> TimerHandle {
        scheduleTimer(deadline: Self.now() &+ Self.nanoseconds(delay), period: nil, action)
    }

    /// Calls `action` every `period` on the loop's thread, the first time one period from now,
    /// until cancelled. A late loop skips missed ticks rather than firing them in a burst.
    @discardableResult
    public func schedule(every period: Duration, _ action: @escaping () -> Void) -> TimerHandle {
        let nanoseconds = max(Self.nanoseconds(period), 1)
        return scheduleTimer(deadline: Self.now() &+ nanoseconds, period: nanoseconds, action)
    }

    /// Cancels a timer: its action does not run again. Cancelling twice, or a one-shot timer
    /// that has fired, is harmless.
    public func cancel(_ timer: TimerHandle) {
        assertOnLoopThread()
        guard timers.remove(timer.entry) else { return }
        timer.entry.action = {}
        nextDeadline = timers.earliest?.deadline ?? .max
    }

    /// Schedules at an absolute monotonic deadline in nanoseconds (for connections' timeouts).
    func scheduleTimer(deadline: UInt64, period: UInt64?, _ action: @escaping () -> Void) -> TimerHandle {
        assertOnLoopThread()
        let entry = TimerEntry(deadline: deadline, period: period, action: action)
        timers.insert(entry)
        nextDeadline = min(nextDeadline, deadline)
        return TimerHandle(entry: entry)
    }

    /// The monotonic clock, in nanoseconds.
    static func now() -> UInt64 { MonotonicClock.nanoseconds() }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }

    // MARK: signals

    /// Delivers `signals` to `handler` on the loop's thread through a signalfd, and blocks them
    /// for the calling thread so their default action (often: terminate) no longer applies.
    ///
    /// A process-directed signal (`kill`) reaches the signalfd only if every thread blocks it:
    /// call this on the main thread before any other thread starts (threads inherit the mask).
    /// A later call for the same signal replaces its handler. The signals stay blocked after
    /// the loop is gone.
    public func onSignal(_ signals: [CInt], _ handler: @escaping (CInt) -> Void) throws(Errno) {
        assertOnLoopThread()
        for signal in signals { signalHandlers[signal] = handler }
        let existing = signalDescriptor?.rawValue ?? -1
        let descriptor = FileDescriptor(rawValue: try Syscall.signalFD(existing: existing,
                                                                        blocking: Array(signalHandlers.keys)))
        if signalDescriptor == nil {
            signalDescriptor = descriptor
            do {
                _ = try register(descriptor, events: .readable) { [unowned self] _ in readSignals() }
            } catch {
                signalDescriptor = nil
                try? descriptor.close()
                throw error
            }
        }
    }

    private func readSignals() {
        guard let signalDescriptor else { return }
        var info = signalfd_siginfo()
        while true {
            let count = withUnsafeMutableBytes(of: &info) { buffer in
                (try? signalDescriptor.read(into: buffer)) ?? 0
            }
            guard count == MemoryLayout<signalfd_siginfo>.size else { return }
            let signal = CInt(info.ssi_signo)
            signalHandlers[signal]?(signal)
        }
    }

    // MARK: work from other threads

    /// Runs `work` on the loop's thread soon, in the order of the calls. Callable from any
    /// thread; the only method that is.
    public func execute(_ work: @Sendable @escaping () -> Void) {
        let wasEmpty = handedOver.withLock { queue in
            queue.append(work)
            return queue.count == 1
        }
        guard wasEmpty else { return }  // a wake-up is on its way already
        var one: UInt64 = 1
        // Fails only if the counter would overflow, which means the loop is being woken anyway.
        _ = withUnsafeBytes(of: &one) { try? wakeUp.write($0) }
    }

    private func runHandedOverWork() {
        var counter: UInt64 = 0
        // Reset the eventfd before taking the queue: a hand-over that lands after the swap
        // then writes again and wakes the next iteration.
        _ = withUnsafeMutableBytes(of: &counter) { try? wakeUp.read(into: $0) }
        let work = handedOver.withLock { queue in
            let taken = queue
            queue.removeAll(keepingCapacity: true)
            return taken
        }
        for item in work { item() }
    }

    // MARK: running

    /// Runs the loop on the calling thread until `stop()`; returns after the iteration in which
    /// `stop()` was called. Throws only if epoll itself fails.
    public func run() throws(Errno) {
        precondition(loopThread == nil, "EventLoop.run() is already running")
        loopThread = pthread_self()
        defer { loopThread = nil }
        stopRequested = false
        var now = Self.now()
        while !stopRequested {
            let count = try Syscall.epollWait(epoll.rawValue, events, capacity: CInt(eventCapacity),
                                              timeoutMilliseconds: waitTimeout(now: now))
            for index in 0..<count {
                let event = events[index]
                let slot = Int(truncatingIfNeeded: event.data.u64 & 0xFFFF_FFFF)
                let generation = UInt32(truncatingIfNeeded: event.data.u64 >> 32)
                // An earlier handler of this batch may have unregistered (and reused) the slot.
                guard slot < slots.count, slots[slot].generation == generation,
                      let handler = slots[slot].handler.map(Unmanaged.passUnretained) else { continue }
                isDispatching = true
                handler._withUnsafeGuaranteedRef { $0.call(Readiness(rawValue: event.events)) }
                isDispatching = false
                if !unregisteredHandlers.isEmpty { releaseUnregisteredHandlers() }
            }
            now = fireDueTimers()
        }
    }

    /// Releases the handlers unregistered while one ran, now that none runs: their owners'
    /// deinits may register and unregister again.
    private func releaseUnregisteredHandlers() {
        var handlers: [Handler] = []
        swap(&handlers, &unregisteredHandlers)
        _ = consume handlers
    }

    /// How many unregistered handlers are kept until the running one returns (tests check the
    /// keeping: in a debug build the call retains its handler anyway).
    var keptUnregisteredHandlers: Int { unregisteredHandlers.count }

    /// Makes `run()` return after the current iteration. From another thread, use
    /// `execute { loop.stop() }`.
    public func stop() {
        assertOnLoopThread()
        stopRequested = true
    }

    /// `epoll_wait`'s timeout for the earliest timer, from the clock at `now` (read after the
    /// iteration's handlers and timers ran, by `fireDueTimers()`).
    private func waitTimeout(now: UInt64) -> CInt {
        let deadline = nextDeadline
        guard deadline != .max else { return -1 }
        guard deadline > now else { return 0 }
        let milliseconds = (deadline - now + 999_999) / 1_000_000
        return CInt(min(milliseconds, UInt64(CInt.max)))
    }

    /// Runs the timers that are due; returns the clock as of its end, for the next wait's
    /// timeout — read once when no timer is due, and again after timer actions ran, so their
    /// run time never lengthens the wait. Without timers it reads no clock and returns 0.
    private func fireDueTimers() -> UInt64 {
        guard nextDeadline != .max else { return 0 }
        let now = Self.now()
        guard nextDeadline <= now else { return now }
        defer { nextDeadline = timers.earliest?.deadline ?? .max }
        // Timers scheduled by the actions below wait for the next iteration, so a timer that
        // re-schedules itself with no delay cannot starve the descriptors.
        let sequenceLimit = timers.upcomingSequence
        while let entry = timers.earliest, entry.deadline <= now, entry.sequence < sequenceLimit {
            timers.remove(entry)
            let action = entry.action
            if let period = entry.period {
                let next = entry.deadline &+ period
                entry.deadline = next > now ? next : now &+ period
                timers.insert(entry)
            } else {
                entry.action = {}
            }
            action()
        }
        return Self.now()
    }

    private func assertOnLoopThread() {
        assert(loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? true,
               "EventLoop used off its thread; only execute(_:) may be called from other threads")
    }
}
