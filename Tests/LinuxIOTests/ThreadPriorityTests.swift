import Glibc
import LinuxIO
import Synchronization
import Testing

@Suite struct ThreadPriorityTests {
    /// `nice` of the calling thread (Linux keeps one per thread).
    static func currentNice() -> Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    /// A worker lowers its own priority and never another thread's; asking for a higher
    /// priority than it has leaves it alone.
    @Test func lowersOnlyTheCallingThread() {
        let before = Self.currentNice()
        let target = min(before + 5, 19)  // 19 is the lowest priority there is
        let seen = Mutex<(lowered: Int32, kept: Int32)?>(nil)
        DetachedThread.start {
            ThreadPriority.lowerCurrentThread(toNice: target)
            let lowered = Self.currentNice()
            ThreadPriority.lowerCurrentThread(toNice: target - 1)
            seen.withLock { $0 = (lowered, Self.currentNice()) }
        }
        var result: (lowered: Int32, kept: Int32)?
        for _ in 0..<5_000 where result == nil {
            usleep(1_000)
            result = seen.withLock { $0 }
        }
        #expect(result?.lowered == target)
        #expect(result?.kept == target)
        #expect(Self.currentNice() == before)
    }

    /// A thread that lowers itself leaves the first of its CPUs to the others, when it has two
    /// or more (one only is kept), and no other thread's CPUs change.
    @Test func aLoweredThreadLeavesOneCPU() {
        let before = ThreadPriority.currentCPUs
        let seen = Mutex<[Int]?>(nil)
        DetachedThread.start {
            ThreadPriority.lowerCurrentThread(toNice: min(Self.currentNice() + 5, 19))
            seen.withLock { $0 = ThreadPriority.currentCPUs }
        }
        var after: [Int]?
        for _ in 0..<5_000 where after == nil {
            usleep(1_000)
            after = seen.withLock { $0 }
        }
        #expect(!before.isEmpty)
        #expect(after == (before.count >= 2 ? Array(before.dropFirst()) : before))
        #expect(ThreadPriority.currentCPUs == before)
    }
}
