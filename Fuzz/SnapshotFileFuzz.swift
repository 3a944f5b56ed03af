// libFuzzer target for a whole `policy.snapshot` file as proctord reads it at start: the text
// header (`PolicySnapshot.decodeHeader`: format, key, body length and XXH64, its own SHA-256),
// then, for a header whose key matches, the body (`PolicySnapshot.decode`: its length, its
// checksum, the policies and the managed apps' digest). The checksums would refuse nearly every
// mutation, so the first byte of the input says which to make right before reading:
//   bit 0: the header's checksum line is written anew over the six lines above it;
//   bit 1: the body line is written anew for the body that follows the header.
// The rest is the file. Properties: nothing traps; a header read is exactly what proctord writes
// for what was read; another key is not taken for it and leaves the body unread; a snapshot read
// whole, written again, reads back as the same snapshot and contents and writes the same bytes.
// Not part of a SwiftPM target; `Fuzz/build.sh snapshot-file` builds it with
// Sources/ProctorDaemon/PolicySnapshot.swift compiled in.
import JSONCore
import ProctorPolicy

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let file = sealed(Array(UnsafeBufferPointer(start: data + 1, count: size - 1)), mode: data[0])
    file.withUnsafeBytes(checkFile)
    return 0
}

private func checkFile(_ file: UnsafeRawBufferPointer) {
    let header: PolicySnapshot.Header
    switch Result(catching: { () throws(PolicySnapshot.Unusable) in try PolicySnapshot.decodeHeader(file) }) {
    case .failure(let refusal):
        check(!refusal.description.isEmpty, "a header is refused without a reason")
        let key = PolicySnapshot.Key(build: "0", files: String(repeating: "0", count: 64), bundle: nil)
        check((try? PolicySnapshot.decode(file, matching: key)) == nil, "a file whose header is refused is read")
        return
    case .success(let read):
        header = read
    }
    check(header.length <= file.count && header.length <= PolicySnapshot.maxHeaderBytes, "a header ends past its bytes")
    let written = header.snapshot.header(bodyLength: header.bodyLength, bodyChecksum: header.bodyChecksum)
    check(written.elementsEqual(file[..<header.length]), "a header read is not the header written for what it says")

    var other = header.snapshot.key
    other.build = other.build == "0" ? "1" : "0"
    var bodyRead = false
    let forOther = Result { () throws(PolicySnapshot.Unusable) in
        try PolicySnapshot.decode(file, matching: other) { bodyRead = true }
    }
    check(!bodyRead, "the body is read for another key")
    guard case .success(nil) = forOther else { fail("a snapshot is taken, or refused, for another key") }

    let read = Result { () throws(PolicySnapshot.Unusable) in try PolicySnapshot.decode(file, matching: header.snapshot.key) }
    guard case .success(let found) = read else { return }
    guard let (snapshot, contents) = found else { fail("a snapshot is not taken for its own key") }
    check(snapshot == header.snapshot, "a snapshot read whole differs from its header")
    let again = snapshot.encoded(contents)
    let reread = again.withUnsafeBytes { bytes in
        Result { () throws(PolicySnapshot.Unusable) in try PolicySnapshot.decode(bytes, matching: snapshot.key) }
    }
    guard case .success(let refound?) = reread else { fail("a snapshot read, written again, is not read back") }
    check(refound.0 == snapshot, "a snapshot written again has another header")
    check(refound.1.compiled.policy == contents.compiled.policy && refound.1.directory?.policy == contents.directory?.policy
          && refound.1.managedAppsDigest.hasSameBytes(as: contents.managedAppsDigest),
          "a snapshot written again holds other contents")
    check(refound.0.encoded(refound.1) == again, "a snapshot written again writes other bytes")
}

/// `bytes` with the checksums `mode` asks for made right: the header's six lines, the
/// checksum line, the body. Bytes without seven lines are left as they are.
private func sealed(_ bytes: [UInt8], mode: UInt8) -> [UInt8] {
    let newline = UInt8(ascii: "\n")
    var lineEnds: [Int] = []
    for (offset, byte) in bytes.prefix(PolicySnapshot.maxHeaderBytes).enumerated() where byte == newline {
        lineEnds.append(offset)
        if lineEnds.count == 7 { break }
    }
    guard mode & 3 != 0, lineEnds.count == 7 else { return bytes }
    var lines = Array(bytes[..<(lineEnds[4] + 1)])
    let body = Array(bytes[(lineEnds[6] + 1)...])
    var bodyLine = Array(bytes[(lineEnds[4] + 1)...lineEnds[5]])
    if mode & 2 != 0 {
        let checksum = body.withUnsafeBytes { String(SnapshotChecksum.xxh64($0), radix: 16) }
        bodyLine = Array("body \(body.count) \(String(repeating: "0", count: 16 - checksum.count) + checksum)\n".utf8)
    }
    lines += bodyLine
    let checksumLine = mode & 1 != 0 ? Array("checksum \(SHA256.hexDigest(lines))\n".utf8)
                                     : Array(bytes[(lineEnds[5] + 1)...lineEnds[6]])
    return lines + checksumLine + body
}
