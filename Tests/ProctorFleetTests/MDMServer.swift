import Foundation
import ProctorFleet
import TestSupport

/// bundle_server.py running for one test: HTTPS on 127.0.0.1 with certificates it made with
/// openssl in a temporary directory, and a CONNECT proxy. Stopped when released. `keepAlive`:
/// HTTP/1.1 with connections kept open, for `idleTimeout` seconds when given; `port`: listen
/// there (where another server, with other certificates, listened).
final class MDMServer {
    let directory: TemporaryDirectory
    let process: ChildProcess
    let port: Int
    let proxyPort: Int

    init(keepAlive: Bool = false, idleTimeout: Double? = nil, port: Int? = nil) throws {
        directory = try TemporaryDirectory(prefix: "proctor-mdm")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("bundle_server.py")
        let options = (keepAlive ? ["--keep-alive"] : []) + (idleTimeout.map { ["--idle-timeout=\($0)"] } ?? [])
            + (port.map { ["--port=\($0)"] } ?? [])
        process = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), arguments: [script.path] + options + [directory.path])
        let line = try process.waitForOutputLines(count: 1, timeout: .seconds(30))[0]
        let fields = line.split(separator: " ")
        guard fields.count == 3, fields[0] == "READY", let port = Int(fields[1]), let proxyPort = Int(fields[2]) else {
            throw TestSupportError("bundle_server.py said \(line); stderr: \(process.errorOutput)")
        }
        self.port = port
        self.proxyPort = proxyPort
    }

    /// Stops the server and waits until it has exited, so its port is free.
    func stop() throws {
        try process.send(SIGKILL)
        _ = try process.waitForExit()
    }

    /// How each request so far reached the server: "full" (a new TLS connection, full
    /// handshake), "resumed" (a new connection resuming a TLS session) or "kept" (an open one).
    func connections() throws -> [String] {
        (try log()["requests"] as? [[String: Any]] ?? []).compactMap { $0["connection"] as? String }
    }

    /// `https://localhost:PORT/PATH`, the name the server's certificate carries.
    func url(_ path: String) -> String { "https://localhost:\(port)/\(path)" }

    func file(_ name: String) -> String { directory.path + "/" + name }

    /// Replaces the bundle the server serves at /bundle.
    func publish(_ body: String) throws { try Data(body.utf8).write(to: directory.appending("bundle")) }

    /// What the server saw: `requests` ({path, ifNoneMatch, userAgent}, this one last) and the
    /// proxy's `connects` (host:port).
    func log() throws -> [String: Any] {
        let request = FetchRequest(url: url("log"), caCertificate: file("ca.pem"), maximumBytes: 1 << 20)
        guard case .fetched(let body, _) = try BundleFetcher().fetch(request),
              let log = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw TestSupportError("no log from bundle_server.py")
        }
        return log
    }

    func requestedPaths() throws -> [String] {
        (try log()["requests"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
    }
}
