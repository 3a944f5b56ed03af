// systemdkit-probe: drives SystemdKit from the real-systemd tests in Tests/systemd.
//   systemdkit-probe log TARGET MESSAGE_ID PRIORITY MESSAGE [FIELD=value …]
//       TARGET is auto|journal|stderr; prints the chosen target, logs one event through a
//       Logger, flushes, and fails if the sink refused it. With PROBE_LINGER_MS set, it then
//       stays alive that long: journald adds _SYSTEMD_UNIT from /proc/PID when it reads a
//       record, so a process that has already exited (likely on a loaded machine) gets
//       records without it. With PROBE_REPEAT_MESSAGE=N the message is MESSAGE N times over
//       (a record larger than one datagram may be: it goes through a sealed memory file).
//   systemdkit-probe serve
//       takes the socket-activated descriptors, reports READY=1 with their names in STATUS=,
//       then answers every connection with the FileDescriptorName of the socket it came in on
//       and the caller's executable as proctord finds it: SO_PEERCRED, then /proc/PID/exe.
import CLinux
import Glibc
import SystemdKit

func fail(_ message: String) -> Never {
    let line = Array("systemdkit-probe: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(1)
}

func log(_ arguments: ArraySlice<String>) {
    guard arguments.count >= 4, let setting = LogTarget.Setting(rawValue: arguments[arguments.startIndex]) else {
        fail("usage: log auto|journal|stderr MESSAGE_ID PRIORITY MESSAGE [FIELD=value …]")
    }
    let values = Array(arguments)
    let messageID: MessageID
    do { messageID = try MessageID(parsing: values[1]) } catch { fail("\(error)") }
    guard let priority = LogPriority.allCases.first(where: { $0.description == values[2] }) else {
        fail("unknown priority \(values[2])")
    }
    var fields: [(String, String)] = []
    for assignment in values.dropFirst(4) {
        guard let equals = assignment.firstIndex(of: "="),
              LogEvent.isValidFieldName(String(assignment[..<equals])) else { fail("bad field \(assignment)") }
        fields.append((String(assignment[..<equals]), String(assignment[assignment.index(after: equals)...])))
    }
    let target = setting.resolve()
    print("target=\(target)")
    let logger = Logger(sink: target.makeSink(syslogIdentifier: "systemdkit-probe"), minimumPriority: .debug,
                        droppedMessagesID: MessageID("00000000000000000000000000000001"))
    let repeatCount = getenv("PROBE_REPEAT_MESSAGE").flatMap { Int(String(cString: $0)) } ?? 1
    logger.log(LogEvent(messageID, priority, String(repeating: values[3], count: repeatCount), fields: fields))
    logger.flush()
    if let failure = logger.counters.lastSinkFailure { fail("\(failure)") }
    if let linger = getenv("PROBE_LINGER_MS").flatMap({ UInt32(String(cString: $0)) }) { usleep(linger * 1000) }
}

func serve() {
    let sockets: [String: [CInt]]
    do { sockets = try ListenedSockets.receive() } catch { fail("\(error)") }
    if getenv("LISTEN_FDS") != nil { fail("LISTEN_FDS still set") }
    var names: [CInt: String] = [:]
    for (name, descriptors) in sockets {
        for descriptor in descriptors {
            guard fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0 else { fail("descriptor \(descriptor) lacks FD_CLOEXEC") }
            names[descriptor] = name
        }
    }
    let summary = sockets.keys.sorted().map { "\($0)=\(sockets[$0]!.count)" }.joined(separator: " ")
    do { try SystemdNotifier().notify(["READY=1", "STATUS=sockets \(summary)"]) } catch { fail("\(error)") }
    var polls = names.keys.sorted().map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    while true {
        if poll(&polls, nfds_t(polls.count), -1) < 0 {
            if errno == EINTR { continue }
            fail("poll: \(String(cString: strerror(errno)))")
        }
        for entry in polls where entry.revents & Int16(POLLIN) != 0 {
            let connection = clinux_accept_nonblocking(entry.fd)
            guard connection >= 0 else { continue }
            let reply = Array((names[entry.fd]! + " " + peerExecutable(connection) + "\n").utf8)
            _ = reply.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            close(connection)
        }
    }
}

/// The peer's executable path, or `error:` and the errno text.
func peerExecutable(_ connection: CInt) -> String {
    var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
    guard clinux_peer_credentials(connection, &pid, &uid, &gid) == 0 else { return "error:SO_PEERCRED:\(errno)" }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
    guard length >= 0 else { return "error:\(String(cString: strerror(errno)))" }
    return String(decoding: buffer[0 ..< length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "log": log(arguments.dropFirst())
case "serve": serve()
default: fail("usage: systemdkit-probe log …|serve")
}
