import Dispatch
import Glibc

/// Work that runs for a long time on a thread of its own: a detached POSIX thread (rather
/// than Foundation's `Thread`, so a daemon does not load Foundation for one thread). Should no
/// thread be available, a Dispatch worker runs it instead.
public enum DetachedThread {
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            DispatchQueue.global(qos: .utility).async(execute: body)
            return
        }
        pthread_detach(thread)
    }

    private final class Work: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
