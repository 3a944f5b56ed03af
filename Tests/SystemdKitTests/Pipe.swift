import Glibc

/// A real pipe for the tests, closed when dropped.
final class Pipe {
    let read: CInt
    let write: CInt

    struct Failure: Error { let errno: Int32 }

    init() throws {
        var descriptors: [CInt] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw Failure(errno: errno) }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        read = descriptors[0]
        write = descriptors[1]
    }

    /// Everything readable now, without waiting.
    func readAvailable() -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let flags = fcntl(read, F_GETFL)
        _ = fcntl(read, F_SETFL, flags | O_NONBLOCK)
        while true {
            let count = Glibc.read(read, &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[0 ..< count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    deinit {
        close(read)
        close(write)
    }
}
