import Glibc

/// A plain POSIX thread running a closure, joined with `join()`.
struct BenchThread {
    private let thread: pthread_t

    init(_ body: @escaping @Sendable () -> Void) throws(BenchError) {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            throw BenchError("pthread_create failed: \(String(cString: strerror(status)))")
        }
        self.thread = thread
    }

    func join() { pthread_join(thread, nil) }
}
