import CLinux

/// The GNU build id of the running executable (`readelf -n`: `NT_GNU_BUILD_ID`), which the linker
/// derives from the binary's content: two builds of different code have different ids. Read from
/// the executable's program headers in memory, so it costs no file access.
public enum ExecutableBuildID {
    /// Lowercase hex, or nil when the executable was linked without a build id.
    public static let current: String? = {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBufferPointer { clinux_executable_build_id($0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return bytes[..<count].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }()
}
