import Dispatch
import Glibc
import LinuxIO
import Synchronization

/// An `AtomicFileReplacement` filled through two buffers: while the caller fills one, a thread
/// of the replacement's own writes the other to the temporary file, and from time to time hands
/// what it wrote to the disk (`startWriteback`). For a protected file this overlaps sealing a
/// batch of chunks with the kernel copying the previous batch into the page cache and with the
/// disk writing the batches before, so `commit()`'s `fsync` has less left to wait for. Content
/// that fits one buffer is written on the caller's thread at `commit()`, and no thread is
/// started.
///
/// A POSIX thread per file rather than a Dispatch queue: a forked child (a test, a crash
/// helper) may still write, which libdispatch's queues do not allow.
///
/// `commit()` and `discard()` wait only until the thread has written the last buffer handed to
/// it, not until the thread has ended: the caller goes on to the `fsync` while the idle thread
/// is told to stop, which saves two thread wake-ups (each 35–45 µs when the other CPU is idle)
/// per file.
///
/// Used from one thread at a time. Unchecked `Sendable` because the writing thread shares state
/// with the caller, handed over by semaphores: a buffer and its entry in `batchCounts` belong to
/// the writing thread from `submitted` until `free`; the replacement is touched by the caller
/// only when the thread is idle, and never again by the thread once it is told to stop; the
/// first write error is kept under a lock.
final class PipelinedFileReplacement: @unchecked Sendable {
    private let replacement: AtomicFileReplacement
    private let buffers: [UnsafeMutableRawBufferPointer]
    /// Bytes to write from each buffer; `stopMark` tells the writing thread to end.
    private var batchCounts = [0, 0]
    private static let stopMark = -1
    /// The writing thread starts writeback after every batch (256 KiB) of the first MiB, then
    /// after twice as much each time, up to every 4 MiB: a 1 MiB file has all but its last batch
    /// under way before that batch is sealed, and a large one does not keep its writing thread
    /// waiting in `sync_file_range` (after every 256 KiB batch, 64 MiB writes were 1.5–6× slower
    /// on the loaded test VM; BENCHMARKS.md, "ProtectedStorage writes").
    private static let firstWriteback = 256 << 10
    private static let everyBatchUntil = 1 << 20
    private static let largestWriteback = 4 << 20
    private let submitted = DispatchSemaphore(value: 0)
    /// Signalled when the writing thread is done with a buffer; starts at 1, the buffer that is
    /// not being filled. (libdispatch traps if a semaphore is freed below its initial value.)
    private let free = DispatchSemaphore(value: 1)
    private let writeError = Mutex<FileReplacementError?>(nil)
    private var current = 0
    private var isWriterRunning = false
    /// Bytes filled in `buffer`.
    var filled = 0

    /// Creates the temporary file beside `destination` (see `AtomicFileReplacement`) and two
    /// buffers of `bufferSize` bytes.
    init(replacing destination: String, mode: mode_t, bufferSize: Int) throws(FileReplacementError) {
        replacement = try AtomicFileReplacement(replacing: destination, mode: mode)
        buffers = (0..<2).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 64) }
    }

    deinit {
        // The writing thread holds a reference while it runs, so it has ended. An uncommitted
        // replacement removes its temporary file in its own deinit.
        for buffer in buffers { buffer.deallocate() }
    }

    /// The buffer to fill; `filled` bytes of it are.
    var buffer: UnsafeMutableRawBufferPointer { buffers[current] }

    /// Hands the filled part of `buffer` to the writing thread (started on first use) and
    /// switches to the other buffer once the thread is done with it. Throws the first error of
    /// a background write, then and on every later call; the file is then discarded.
    func submit() throws(FileReplacementError) {
        if !isWriterRunning {
            isWriterRunning = true
            DetachedThread.start { [self] in writeBatches() }
        }
        batchCounts[current] = filled
        submitted.signal()
        free.wait()
        current = 1 - current
        filled = 0
        try throwWriteError()
    }

    /// Writes the rest, flushes it and renames the file over the destination
    /// (`AtomicFileReplacement.commit()`); on failure the file is discarded.
    func commit() throws(FileReplacementError) {
        finishWriting()
        try throwWriteError()
        do {
            try replacement.write(UnsafeRawBufferPointer(rebasing: buffer[..<filled]))
        } catch {
            replacement.discard()
            throw error
        }
        try replacement.commit()
    }

    /// Drops the new content once the writing thread is done with the file.
    func discard() {
        finishWriting()
        replacement.discard()
    }

    /// The writing thread: writes the buffers in turn, in the order they were submitted.
    private func writeBatches() {
        var unflushed = 0  // bytes written since the last startWriteback()
        var written = 0
        var writebackAfter = Self.firstWriteback
        var index = 0
        while true {
            submitted.wait()
            let count = batchCounts[index]
            if count == Self.stopMark { break }
            if writeError.withLock({ $0 == nil }) {
                do throws(FileReplacementError) {
                    try replacement.write(UnsafeRawBufferPointer(rebasing: buffers[index][..<count]))
                    unflushed += count
                    written += count
                    if unflushed >= writebackAfter {
                        replacement.startWriteback()
                        unflushed = 0
                        if written >= Self.everyBatchUntil {
                            writebackAfter = min(2 * writebackAfter, Self.largestWriteback)
                        }
                    }
                } catch {
                    writeError.withLock { $0 = error }
                }
            }
            free.signal()
            index = 1 - index
        }
    }

    /// Waits until every submitted buffer is written, then tells the idle writing thread to end
    /// without waiting for it: from here on only the caller touches the file.
    private func finishWriting() {
        guard isWriterRunning else { return }
        isWriterRunning = false
        free.wait()    // the buffer submitted last is written
        free.signal()  // and free again
        batchCounts[current] = Self.stopMark  // the buffer the thread would write next
        submitted.signal()
    }

    private func throwWriteError() throws(FileReplacementError) {
        guard let error = writeError.withLock({ $0 }) else { return }
        discard()
        throw error
    }
}
