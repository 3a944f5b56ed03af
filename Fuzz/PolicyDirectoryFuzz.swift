// libFuzzer target for the policy directory reader, `PolicyDirectory.load`: what proctord
// and `proctorctl policy validate` read from policy.d. The input is split at NUL bytes (no
// JSON text holds a raw NUL) into up to 16 files, written into a fresh policy.d; the file
// of chunk k is named `k.json`, except that a chunk starting with `#` is written as `k.txt`
// and one starting with `.` as `.k.json` (both ignored by the reader). Properties:
// - a refusal carries problems, each naming a file or the directory;
// - an accepted directory lists exactly its *.json files that are not dotfiles, in
//   byte-wise order, and its policy is the one parsing and merging the same bytes in
//   memory gives; a refused one is refused in memory too, with the same problems.
// The directory lives in /dev/shm when there is one (tmpfs: no disk I/O per input), and is
// kept from input to input: a file already there with the same bytes is not written again
// (libFuzzer mutates a unit several times in a row, so most files of an input are usually
// those of the one before).
// Not part of a SwiftPM target; `Fuzz/build.sh policy-dir` builds it (Fuzz/README.md).
import Glibc
import JSONCore
import ProctorPolicy

private let maxFiles = 16

/// One directory per fuzzer process, holding the files of the last input.
private let directory: String = {
    let parent = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    var template = Array("\(parent)/proctor-fuzz-policy.d.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fail("cannot create a directory in \(parent): errno \(errno)") }
    let path = String(cString: made)
    atexit {
        for k in 0..<maxFiles { if let name = onDisk.name(k) { unlink(directory + "/" + name) } }
        rmdir(directory)
    }
    return path
}()

/// The file of each chunk number in `directory`: its name and a hash of its bytes. Kept in
/// storage made once, so that inputs allocate no more than they free: libFuzzer runs an
/// input that does twice, looking for a leak.
private struct FilesOnDisk {
    enum Kind: UInt64 { case none, json, text, dotfile }
    private var slots = [UInt64](repeating: 0, count: 2 * maxFiles)

    static func name(_ k: Int, _ kind: Kind) -> String? {
        switch kind {
        case .none: nil
        case .json: "\(k).json"
        case .text: "\(k).txt"
        case .dotfile: ".\(k).json"
        }
    }

    func name(_ k: Int) -> String? { Self.name(k, Kind(rawValue: slots[2 * k]) ?? .none) }

    /// Makes file `k` of `directory` hold `bytes` under the name `kind` gives it (none: no
    /// file), writing only what changed.
    mutating func update(_ k: Int, _ kind: Kind, _ bytes: Slice<UnsafeBufferPointer<UInt8>>) {
        let hash = Self.hash(bytes)
        if slots[2 * k] == kind.rawValue, slots[2 * k + 1] == hash { return }
        if slots[2 * k] != kind.rawValue, let old = name(k) { unlink(directory + "/" + old) }
        if let new = Self.name(k, kind) { write(bytes, to: directory + "/" + new) }
        slots[2 * k] = kind.rawValue
        slots[2 * k + 1] = hash
    }

    /// FNV-1a, 64 bits, of the bytes and their count.
    private static func hash(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(bytes.count)
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01B3 }
        return hash
    }
}

nonisolated(unsafe) private var onDisk = FilesOnDisk()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let chunks = bytes.split(separator: 0, maxSplits: maxFiles - 1, omittingEmptySubsequences: false)
    var policyFiles: [(name: String, bytes: [UInt8])] = []
    for k in 0..<maxFiles {
        guard k < chunks.count else {
            onDisk.update(k, .none, bytes[0..<0])
            continue
        }
        let chunk = chunks[k]
        let kind: FilesOnDisk.Kind = switch chunk.first {
        case UInt8(ascii: "#"): .text
        case UInt8(ascii: "."): .dotfile
        default: .json
        }
        onDisk.update(k, kind, chunk)
        if kind == .json, let name = FilesOnDisk.name(k, kind) { policyFiles.append((name, Array(chunk))) }
    }
    policyFiles.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }

    let loaded: Result<LoadedPolicy, PolicyProblems>
    do {
        loaded = .success(try PolicyDirectory.load(directory))
    } catch {
        check(!error.problems.isEmpty, "a refused directory must say why")
        for problem in error.problems {
            check(problem.source == directory || policyFiles.contains { $0.name == problem.source },
                  "problem names neither the directory nor a policy file: \(problem)")
        }
        loaded = .failure(error)
    }
    guard !policyFiles.isEmpty else {
        check((try? loaded.get()) == nil, "a directory without policy files was accepted")
        return 0
    }
    switch (loaded, inMemory(policyFiles)) {
    case (.success(let fromDisk), .success(let policy)):
        check(fromDisk.sources == policyFiles.map(\.name), "read \(fromDisk.sources), wrote \(policyFiles.map(\.name))")
        check(fromDisk.policy == policy, "the directory reads as another policy than its bytes parse to")
    case (.failure(let fromDisk), .failure(let problems)):
        check(fromDisk == problems, "the directory and its bytes are refused differently:\n\(fromDisk)\n--\n\(problems)")
    case (.success, .failure(let problems)):
        fail("the directory was accepted, its bytes refused:\n\(problems)")
    case (.failure(let fromDisk), .success):
        fail("the directory was refused, its bytes accepted:\n\(fromDisk)")
    }
    return 0
}

/// What `PolicyDirectory.load` does, on bytes in memory: parse every file, report every
/// file's problems, merge in name order.
private func inMemory(_ files: [(name: String, bytes: [UInt8])]) -> Result<Policy, PolicyProblems> {
    var fragments: [PolicyFragment] = []
    var problems: [PolicyProblem] = []
    for file in files {
        do {
            fragments.append(try PolicyFragment.parse(file.bytes, source: file.name))
        } catch {
            problems += error.problems
        }
    }
    guard problems.isEmpty else { return .failure(PolicyProblems(problems)) }
    return Result { () throws(PolicyProblems) in try Policy.merge(fragments) }
}

private func write(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, to path: String) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { fail("cannot create \(path): errno \(errno)") }
    defer { close(descriptor) }
    var offset = bytes.startIndex
    while offset < bytes.endIndex {
        let rest = UnsafeBufferPointer(rebasing: bytes[offset...])
        let count = Glibc.write(descriptor, rest.baseAddress, rest.count)
        guard count > 0 else { fail("cannot write \(path): errno \(errno)") }
        offset += count
    }
}
