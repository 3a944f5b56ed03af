/// One scheduled timer: its deadline on the monotonic clock, its action and, when it repeats,
/// its period. `heapIndex` is its place in the queue, -1 while it is not scheduled.
final class TimerEntry {
    var deadline: UInt64
    var sequence: UInt64 = 0
    let period: UInt64?
    var action: () -> Void
    var heapIndex = -1

    init(deadline: UInt64, period: UInt64?, action: @escaping () -> Void) {
        self.deadline = deadline
        self.period = period
        self.action = action
    }
}

/// A binary min-heap of timers ordered by deadline, then by scheduling order (so timers due at
/// the same instant fire in the order they were scheduled). Insert, remove and pop are
/// O(log n); each entry knows its index, so cancelling removes it at once instead of leaving
/// garbage behind until its deadline.
struct TimerQueue {
    private var heap: [TimerEntry] = []
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var earliest: TimerEntry? { heap.first }

    /// The sequence number the next inserted entry gets; entries inserted from now on compare
    /// greater or equal.
    var upcomingSequence: UInt64 { nextSequence }

    mutating func insert(_ entry: TimerEntry) {
        precondition(entry.heapIndex == -1, "a timer is scheduled once at a time")
        entry.sequence = nextSequence
        nextSequence += 1
        entry.heapIndex = heap.count
        heap.append(entry)
        siftUp(heap.count - 1)
    }

    /// Removes `entry` if it is scheduled; returns whether it was.
    @discardableResult
    mutating func remove(_ entry: TimerEntry) -> Bool {
        let index = entry.heapIndex
        guard index >= 0, index < heap.count, heap[index] === entry else { return false }
        let last = heap.removeLast()
        entry.heapIndex = -1
        if index < heap.count {
            heap[index] = last
            last.heapIndex = index
            siftDown(index)
            siftUp(last.heapIndex)
        }
        return true
    }

    private func precedes(_ a: TimerEntry, _ b: TimerEntry) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
    }

    private mutating func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        heap[i].heapIndex = i
        heap[j].heapIndex = j
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count, precedes(heap[left], heap[first]) { first = left }
            if right < heap.count, precedes(heap[right], heap[first]) { first = right }
            if first == parent { return }
            swapAt(parent, first)
            parent = first
        }
    }
}
