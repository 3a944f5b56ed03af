import Glibc

/// Erases the wrapped data keys from a corrupt database before it is kept for inspection.
///
/// The fresh database that replaces it never learns the keys in it, so no later wipe could
/// destroy them there, and anyone who later gets the machine key could unwrap them from the
/// copy. SQLite cannot be trusted with a damaged file (that is why it is kept), so the bytes
/// are read as bytes: every run of at least `minimumRun` lower-case hex digits — the form the
/// store writes a wrapped key in (146 digits, after its key id's 16) — is overwritten with
/// `0`s in place, wherever it lies (a live row, free space, a frame of the write-ahead log).
/// The file keeps its length and its pages their structure; only such runs are lost (a
/// bundle's SHA-256, a long hex string in a policy or an event among them).
enum WrappedKeyErasure {
    /// 32 digits (16 bytes). A shorter fragment of a wrapped key cannot hold its 24-byte nonce
    /// (48 digits), without which no byte of the key can be decrypted.
    static let minimumRun = 32

    /// Erases the runs in the file at `path` (see the type), durably (`msync`, `fsync`) when it
    /// changed any. A missing file has none. Only a regular file is erased: a symbolic link
    /// would have it overwrite whatever file the link names, while SQLite keeps that file's
    /// `-wal` beside it, where neither this nor the move aside looks.
    /// - Returns: how many runs it changed; a run already all `0` stays as it is, so erasing
    ///   twice changes nothing the second time.
    static func erase(fileAt path: String) throws(StoreError) -> Int {
        let descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if descriptor < 0 {
            if errno == ENOENT { return 0 }
            if errno == ELOOP { throw notRegular(path, "a symbolic link") }
            throw failure(path, "open")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure(path, "stat") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw notRegular(path, "not a regular file") }
        let size = Int(status.st_size)
        guard size > 0 else { return 0 }
        let address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)
        guard let address, Int(bitPattern: address) != -1 else { throw failure(path, "map") }
        defer { munmap(address, size) }
        let changed = eraseRuns(in: UnsafeMutableBufferPointer(start: address.assumingMemoryBound(to: UInt8.self), count: size))
        if changed > 0 {
            guard msync(address, size, MS_SYNC) == 0 else { throw failure(path, "write") }
            guard fsync(descriptor) == 0 else { throw failure(path, "fsync") }
        }
        return changed
    }

    /// Overwrites with `0` every run of `minimumRun` or more lower-case hex digits in `bytes`.
    /// - Returns: how many runs it changed.
    static func eraseRuns(in bytes: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var changed = 0
        var start = 0
        while start < bytes.count {
            guard isHexDigit(bytes[start]) else {
                start += 1
                continue
            }
            var end = start + 1
            var allZero = bytes[start] == zero
            while end < bytes.count && isHexDigit(bytes[end]) {
                allZero = allZero && bytes[end] == zero
                end += 1
            }
            if end - start >= minimumRun && !allZero {
                for index in start..<end { bytes[index] = zero }
                changed += 1
            }
            start = end
        }
        return changed
    }

    private static let zero = UInt8(ascii: "0")

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func notRegular(_ path: String, _ what: String) -> StoreError {
        .io(path: path, message: "cannot erase the data keys from the corrupt database: it is \(what); it was neither "
            + "erased nor moved aside: replace it by the file itself")
    }

    private static func failure(_ path: String, _ operation: String) -> StoreError {
        let code = errno
        if code == EROFS || code == EACCES || code == EPERM { return .readOnly(path: path) }
        if code == ENOSPC { return .storageFull(path: path) }
        return .io(path: path, message: "cannot erase the data keys from the corrupt database (\(operation)): "
                   + String(cString: strerror(code)))
    }
}
