import Glibc
@testable import LinuxIO
import Testing

/// `ProcessHandle.wasAlive(afterReceipt:)` on real processes, watched on a `ProcessExitWatch`
/// or asked on their pidfds: a process counts as alive after a read only while no look after
/// that read found it exited.
@Suite struct ProcessExitWatchTests {
    /// A forked child that waits to be killed, and a handle on it.
    private func pausedChild() throws -> (pid: pid_t, handle: ProcessHandle) {
        let child = fork()
        if child == 0 {
            pause()
            _exit(0)
        }
        try #require(child > 0)
        return (child, try ProcessHandle.open(pid: child))
    }

    /// Kills `child` and waits until its pidfd says so, without reaping it: its pid stays
    /// taken while the test looks.
    private func kill(_ child: pid_t, _ handle: ProcessHandle) throws {
        Glibc.kill(child, SIGKILL)
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while try handle.isAlive, MonotonicClock.nanoseconds() < deadline { usleep(1_000) }
    }

    @Test func aWatchedProcessLivedAfterTheReadsBeforeTheLookThatFoundItAlive() throws {
        let loop = try EventLoop()
        let watch = try ProcessExitWatch(loop: loop)
        let (first, firstHandle) = try pausedChild()
        let (second, secondHandle) = try pausedChild()
        defer {
            Glibc.kill(first, SIGKILL)
            Glibc.kill(second, SIGKILL)
            _ = waitForForkedChild(first)
            _ = waitForForkedChild(second)
        }
        try watch.watch(firstHandle)
        try watch.watch(firstHandle)  // again: nothing changes
        try watch.watch(secondHandle)

        loop.readsReceived = 1
        #expect(firstHandle.wasAlive(afterReceipt: 1))
        try kill(second, secondHandle)
        // The look for the first process's read 1 found the second alive too: one look
        // answers for every watched process and every read made before it.
        #expect(secondHandle.wasAlive(afterReceipt: 1))
        loop.readsReceived = 2
        #expect(!secondHandle.wasAlive(afterReceipt: 2), "read after it exited")
        #expect(firstHandle.wasAlive(afterReceipt: 2))
        // Once seen exited, never alive again, and off the watch's epoll instance.
        #expect(!secondHandle.wasAlive(afterReceipt: 1))
        #expect(try watchedEvents(onEpoll: watch.epoll, secondHandle.descriptor) == nil)
        #expect(try watchedEvents(onEpoll: watch.epoll, firstHandle.descriptor) != nil)

        try kill(first, firstHandle)
        #expect(!firstHandle.wasAlive(afterReceipt: 0), "an unknown read is one after every look")
    }

    @Test func anUnwatchedProcessIsAskedOnItsPidfd() throws {
        let (child, handle) = try pausedChild()
        defer { _ = waitForForkedChild(child) }
        #expect(handle.wasAlive(afterReceipt: 1))
        try kill(child, handle)
        #expect(handle.wasAlive(afterReceipt: 1), "read 1 came before the pidfd said it was alive")
        #expect(!handle.wasAlive(afterReceipt: 2))
        #expect(!handle.wasAlive(afterReceipt: 0))
    }

    /// A handle released while its process lives leaves the watch: the kernel takes a pidfd
    /// off an epoll instance only when its file closes, which another reference to it (here a
    /// duplicate; in the daemon a fork's copy) delays, and the watch would then report a
    /// released handle.
    @Test func aReleasedHandleLeavesTheWatch() throws {
        let loop = try EventLoop()
        let watch = try ProcessExitWatch(loop: loop)
        let (child, handle) = try pausedChild()
        defer {
            Glibc.kill(child, SIGKILL)
            _ = waitForForkedChild(child)
        }
        let duplicate = dup(handle.descriptor.rawValue)
        try #require(duplicate >= 0)
        defer { close(duplicate) }
        try watch.watch(handle)
        let watched = handle.descriptor
        #expect(try watchedEvents(onEpoll: watch.epoll, watched) != nil)
        _ = consume handle
        #expect(try watchedEvents(onEpoll: watch.epoll, watched) == nil)
    }
}
