import Foundation
import Glibc
import LinuxIO
import ProctorCrypto
import ProctorKit
import ProctorKitTesting
import TestSupport

/// ProtectedStorage's throughput beside plain files of the same sizes, in the same run and
/// directory. Both writes are durable replacements (temporary file, fsync, rename, directory
/// fsync), so the difference is the encryption; both reads read the whole file into memory
/// (from the page cache: the cost measured is ours, not the disk's).
enum StorageBench: BenchCommand {
    static let name = "storage"
    static let summary = "ProtectedStorage write/read throughput (MB/s), 1 MiB and 64 MiB, beside plain files"

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        let directory = try TemporaryDirectory.make(prefix: "proctor-bench-storage")
        defer { directory.remove() }
        let storage = try ProtectedStorage(dataDirectory: directory.path, keySource: TestKeySource())
        let plainDirectory = directory.path + "/plain"
        mkdir(plainDirectory, 0o700)
        for (label, size, runs) in [("1MiB", 1 << 20, options.quick ? 5 : 30), ("64MiB", 64 << 20, options.quick ? 2 : 6)] {
            let content = Data(try SecureRandom.bytes(count: size))
            let plainPath = plainDirectory + "/file"
            var plainWrite: [Double] = [], protectedWrite: [Double] = [], plainRead: [Double] = [], protectedRead: [Double] = []
            // Alternate plain and protected runs so both see the same disk and cache weather.
            for _ in 0..<runs {
                plainWrite.append(try throughput(size) {
                    let replacement = try AtomicFileReplacement(replacing: plainPath, mode: 0o600)
                    try content.withUnsafeBytes { raw in try replacement.write(raw) }
                    try replacement.commit()
                })
                protectedWrite.append(try throughput(size) { try storage.write(content, to: "file") })
                plainRead.append(try throughput(size) {
                    guard try readWhole(plainPath).count == size else { throw BenchError("short plain read") }
                })
                protectedRead.append(try throughput(size) {
                    guard try storage.read("file").count == size else { throw BenchError("short protected read") }
                })
            }
            report(Figure(name: "storage.plain.write.\(label)", unit: "MB/s", samples: plainWrite))
            report(Figure(name: "storage.protected.write.\(label)", unit: "MB/s", samples: protectedWrite))
            report(Figure(name: "storage.plain.read.\(label)", unit: "MB/s", samples: plainRead))
            report(Figure(name: "storage.protected.read.\(label)", unit: "MB/s", samples: protectedRead))
        }
    }

    /// MB/s of `body` moving `bytes`.
    private static func throughput(_ bytes: Int, _ body: () throws -> Void) throws -> Double {
        let began = MonotonicClock.nanoseconds()
        try body()
        return Double(bytes) / 1e6 / (Double(MonotonicClock.nanoseconds() - began) / 1e9)
    }

    /// The whole file, read in one buffer of its size.
    private static func readWhole(_ path: String) throws -> Data {
        let descriptor = try FileDescriptor.open(path, O_RDONLY)
        defer { try? descriptor.close() }
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0 else { throw Errno.current }
        var data = Data(count: Int(status.st_size))
        var filled = 0
        try data.withUnsafeMutableBytes { raw in
            while filled < raw.count {
                let count = try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                if count == 0 { break }
                filled += count
            }
        }
        return data.prefix(filled)
    }
}
