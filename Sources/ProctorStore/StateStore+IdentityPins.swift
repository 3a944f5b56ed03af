/// A process proctord verified: while it runs (the same boot, pid and start time) it keeps
/// the identity it was verified with, even once the file at `executable` is replaced.
public struct IdentityPin: Sendable, Hashable {
    /// `/proc/sys/kernel/random/boot_id` when the process was verified.
    public var bootID: String
    public var pid: Int32
    /// Field 22 of `/proc/PID/stat`: clock ticks after boot.
    public var startTime: UInt64
    /// The `match.executable` path the process was verified against.
    public var executable: String
    /// The file the process ran when it was verified (`stat` of `/proc/PID/exe`).
    public var device: UInt64
    public var inode: UInt64

    public init(bootID: String, pid: Int32, startTime: UInt64, executable: String, device: UInt64, inode: UInt64) {
        self.bootID = bootID
        self.pid = pid
        self.startTime = startTime
        self.executable = executable
        self.device = device
        self.inode = inode
    }
}

extension StateStore {
    /// Records `pin` (again: a no-op). Unflushed (each registration of a new process pins
    /// it): a power loss may lose it, and with it ends every process it could name.
    public func recordIdentityPin(_ pin: IdentityPin, at time: UnixMilliseconds) throws(StoreError) {
        try FieldLimit.check(pin.executable, field: "executable", maxCharacters: FieldLimit.executable)
        try writeTransaction(.unflushed) { () throws(StoreError) in
            try connection.run("""
                INSERT OR IGNORE INTO identity_pins (boot_id, pid, start_time, executable, device, inode, pinned_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, [.text(pin.bootID), .integer(Int64(pin.pid)), .integer(Int64(bitPattern: pin.startTime)),
                      .text(pin.executable), .integer(Int64(bitPattern: pin.device)),
                      .integer(Int64(bitPattern: pin.inode)), .integer(time)])
        }
    }

    /// The pins of one process (one per executable path it was verified against).
    public func identityPins(bootID: String, pid: Int32, startTime: UInt64) throws(StoreError) -> [IdentityPin] {
        try connection.query("""
            SELECT executable, device, inode FROM identity_pins WHERE boot_id = ? AND pid = ? AND start_time = ?
            """, [.text(bootID), .integer(Int64(pid)), .integer(Int64(bitPattern: startTime))]) { row in
            IdentityPin(bootID: bootID, pid: pid, startTime: startTime, executable: row.text(0),
                        device: UInt64(bitPattern: row.integer(1)), inode: UInt64(bitPattern: row.integer(2)))
        }
    }

    /// Every pin, for pruning those whose process is gone.
    public func identityPins() throws(StoreError) -> [IdentityPin] {
        try connection.query("SELECT boot_id, pid, start_time, executable, device, inode FROM identity_pins") { row in
            IdentityPin(bootID: row.text(0), pid: Int32(truncatingIfNeeded: row.integer(1)),
                        startTime: UInt64(bitPattern: row.integer(2)), executable: row.text(3),
                        device: UInt64(bitPattern: row.integer(4)), inode: UInt64(bitPattern: row.integer(5)))
        }
    }

    /// Removes the pins of these processes, in one transaction, unflushed: a pin a power
    /// loss brings back names a process that is gone, and is removed again.
    public func removeIdentityPins(_ pins: [IdentityPin]) throws(StoreError) {
        guard !pins.isEmpty else { return }
        try writeTransaction(.unflushed) { () throws(StoreError) in
            for pin in pins {
                try connection.run("DELETE FROM identity_pins WHERE boot_id = ? AND pid = ? AND start_time = ?",
                                   [.text(pin.bootID), .integer(Int64(pin.pid)), .integer(Int64(bitPattern: pin.startTime))])
            }
        }
    }
}
