import Glibc

/// A file mapped read-only and private (`mmap`), unmapped when this goes: for reading a large
/// file once without copying it into a buffer first. Its pages are the page cache's, so they
/// cost no anonymous memory and leave nothing resident once unmapped.
public final class MappedFile {
    /// The file's first `size` bytes (empty for an empty file). Valid while this lives; a file
    /// truncated by someone else meanwhile makes reading past its new end fault (`SIGBUS`),
    /// so map only files nobody else writes.
    public let bytes: UnsafeRawBufferPointer

    /// Maps the first `size` bytes of `descriptor`, open for reading.
    public init(_ descriptor: FileDescriptor, size: Int) throws(Errno) {
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor.rawValue, 0)
        guard let address, Int(bitPattern: address) != -1 else { throw Errno.current }
        bytes = UnsafeRawBufferPointer(start: address, count: size)
    }

    /// Maps every page now, in one call, instead of one page fault per page as it is read
    /// (`MADV_POPULATE_READ`, Linux 5.14); where the kernel lacks it, the pages fault in as read.
    public func populate() {
        guard let base = bytes.baseAddress else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), bytes.count, Self.populateRead)
    }

    /// `MADV_POPULATE_READ`, which Debian 12's headers lack.
    private static let populateRead: CInt = 22

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}
