import Glibc

/// A POSIX mutex with one condition variable: what a thread blocks on until another has work
/// for it, in the kernel (a futex), with no timer.
final class ConditionLock: @unchecked Sendable {
    // Heap-allocated: a pthread mutex or condition must not move once in use.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        // Timed waits measure the monotonic clock (`wait(untilMonotonicNanoseconds:)`), which a
        // change of the wall clock does not move.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Runs `body` with the lock released; call with the lock held.
    func withoutLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_unlock(mutex)
        defer { pthread_mutex_lock(mutex) }
        return try body()
    }

    /// Releases the lock until signalled, then takes it again; call with the lock held, in a
    /// loop that checks what it waits for (a wake-up may be spurious).
    func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// `wait()`, or until the monotonic clock reads `deadline` (`MonotonicClock.nanoseconds()`).
    func wait(untilMonotonicNanoseconds deadline: UInt64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(condition, mutex, &time)
    }

    func signal() { pthread_cond_signal(condition) }
    func broadcast() { pthread_cond_broadcast(condition) }
}
