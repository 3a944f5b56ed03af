import Foundation
import Glibc
import ProctorFleet
import Synchronization
import TestSupport
import Testing

/// The fetcher against a real HTTPS server on 127.0.0.1 (bundle_server.py). Serialized: one
/// test sets https_proxy in the process environment.
@Suite(.serialized) struct BundleFetcherTests {
    let server: MDMServer
    init() throws { server = try MDMServer() }

    func request(_ path: String, etag: String? = nil, maximumBytes: Int = 1 << 20) -> FetchRequest {
        FetchRequest(url: server.url(path), caCertificate: server.file("ca.pem"), etag: etag, maximumBytes: maximumBytes)
    }

    func failure(_ request: FetchRequest) -> FetchFailure? {
        do { _ = try BundleFetcher().fetch(request); return nil } catch { return error }
    }

    @Test func fetchesThenAnUnchangedBundleIsA304() throws {
        try server.publish(#"{"bundle": 1}"#)
        let fetcher = BundleFetcher()
        guard case .fetched(let body, let etag?) = try fetcher.fetch(request("bundle")) else {
            Issue.record("no body with an ETag")
            return
        }
        #expect(body == Array(#"{"bundle": 1}"#.utf8))
        #expect(try fetcher.fetch(request("bundle", etag: etag)) == .notModified)
        try server.publish(#"{"bundle": 2}"#)
        guard case .fetched(let changed, let newTag?) = try fetcher.fetch(request("bundle", etag: etag)) else {
            Issue.record("a changed bundle was not fetched")
            return
        }
        #expect(changed == Array(#"{"bundle": 2}"#.utf8))
        #expect(newTag != etag)
        let requests = try server.log()["requests"] as? [[String: Any]] ?? []
        #expect(requests.prefix(3).map { $0["ifNoneMatch"] as? String } == [nil, etag, etag])
        #expect(requests.first?["userAgent"] as? String == "proctord")
    }

    /// The server closes each connection after answering (as servers do between polls minutes
    /// apart): the next connection resumes the TLS session. A changed CA file takes a new
    /// handle: the new CAs decide at once, no session from before is resumed around them.
    @Test func aNewConnectionResumesTheTLSSessionUntilTheCAFileChanges() throws {
        try server.publish(#"{"bundle": 1}"#)
        let directory = try TemporaryDirectory()
        let caFile = directory.appending("ca.pem").path
        try FileManager.default.copyItem(atPath: server.file("ca.pem"), toPath: caFile)
        var request = request("bundle")
        request.caCertificate = caFile
        let fetcher = BundleFetcher()
        _ = try fetcher.fetch(request)
        _ = try fetcher.fetch(request)
        #expect(try server.connections().prefix(2) == ["full", "resumed"])

        try FileManager.default.removeItem(atPath: caFile)
        try FileManager.default.copyItem(atPath: server.file("other-ca.pem"), toPath: caFile)
        do {
            _ = try fetcher.fetch(request)
            Issue.record("the server was trusted after its CA was replaced in the CA file")
        } catch {
            guard case .tls = error else { Issue.record("expected a TLS failure, got \(error)"); return }
        }
    }

    /// A TLS session resumes only with the server that holds its ticket key, which it proved
    /// when the session began: another server on the same name and port (here with a
    /// certificate from a CA the client does not trust) cannot decrypt the ticket, so the
    /// handshake is a full one, its certificate is verified, and it is refused.
    @Test func aSessionTicketDoesNotLetAnotherServerOnTheSameAddressSkipVerification() throws {
        try server.publish(#"{"bundle": 1}"#)
        let fetcher = BundleFetcher()
        let trusted = request("bundle")
        _ = try fetcher.fetch(trusted)
        _ = try fetcher.fetch(trusted)
        #expect(try server.connections().prefix(2) == ["full", "resumed"])
        try server.stop()
        let impostor = try MDMServer(port: server.port)  // its own, untrusted CA
        try impostor.publish(#"{"bundle": "forged"}"#)
        do {
            _ = try fetcher.fetch(trusted)
            Issue.record("a server whose certificate the CA did not sign was accepted on a resumed session")
        } catch {
            guard case .tls = error else { Issue.record("expected a TLS failure, got \(error)"); return }
        }
        #expect(try impostor.requestedPaths().allSatisfy { $0 != "/bundle" })
    }

    /// A connection the server keeps open carries the next request as long as it has been idle
    /// for less than `connectionIdleSeconds` (what `BundlePoller` sets to its interval); after
    /// that the fetcher opens a new one, which resumes the TLS session.
    @Test func aKeptConnectionServesTheNextRequestWithinTheIdleTimeItIsAllowed() throws {
        let server = try MDMServer(keepAlive: true)
        try server.publish(#"{"bundle": 1}"#)
        var request = FetchRequest(url: server.url("bundle"), caCertificate: server.file("ca.pem"), maximumBytes: 1 << 20)
        request.connectionIdleSeconds = 30
        let fetcher = BundleFetcher()
        guard case .fetched(_, let etag?) = try fetcher.fetch(request) else { Issue.record("no ETag"); return }
        // The kept connection has TCP keep-alive on: the kernel's keep-alive timer is armed.
        #expect(try tcpTimers(toPort: server.port) == ["keepalive"])
        request.etag = etag
        sleep(2)
        #expect(try fetcher.fetch(request) == .notModified)
        request.connectionIdleSeconds = 1
        sleep(2)
        #expect(try fetcher.fetch(request) == .notModified)
        #expect(try server.connections().prefix(3) == ["full", "kept", "resumed"])
    }

    /// A kept connection the server closed while it was idle (its keep-alive timeout) is not
    /// used: the poll opens a new connection, resumes the TLS session and succeeds.
    @Test func aKeptConnectionTheServerClosedIsReopened() throws {
        let server = try MDMServer(keepAlive: true, idleTimeout: 1)
        try server.publish(#"{"bundle": 1}"#)
        var request = FetchRequest(url: server.url("bundle"), caCertificate: server.file("ca.pem"), maximumBytes: 1 << 20)
        request.connectionIdleSeconds = 300
        let fetcher = BundleFetcher()
        guard case .fetched(_, let etag?) = try fetcher.fetch(request) else { Issue.record("no ETag"); return }
        request.etag = etag
        #expect(try fetcher.fetch(request) == .notModified)
        sleep(3)
        #expect(try fetcher.fetch(request) == .notModified)
        #expect(try server.connections().prefix(3) == ["full", "kept", "resumed"])
    }

    /// proctord without a network: through an AF_UNIX socket that systemd's own forwarder
    /// (`systemd-socket-proxyd`, as proctord-mdm.service runs it) connects to the server. TLS
    /// still verifies the URL's host name, and the URL's host and port are only names then.
    @Test func fetchesThroughAUnixSocketForwarder() throws {
        try server.publish(#"{"bundle": "via socket"}"#)
        let socket = server.file("mdm.socket")
        let forwarder = try ChildProcess(URL(fileURLWithPath: "/usr/bin/systemd-socket-activate"),
                                         arguments: ["-l", socket, "/lib/systemd/systemd-socket-proxyd", "127.0.0.1:\(server.port)"])
        defer { try? forwarder.send(SIGKILL) }
        try waitUntil { FileManager.default.fileExists(atPath: socket) }
        var viaSocket = FetchRequest(url: "https://localhost:1/bundle", caCertificate: server.file("ca.pem"), maximumBytes: 1 << 20)
        viaSocket.unixSocket = socket
        let fetcher = BundleFetcher()
        guard case .fetched(let body, let etag?) = try fetcher.fetch(viaSocket) else {
            Issue.record("no body with an ETag through the socket")
            return
        }
        #expect(body == Array(#"{"bundle": "via socket"}"#.utf8))
        viaSocket.etag = etag
        #expect(try fetcher.fetch(viaSocket) == .notModified)
        // The name TLS checks is still the URL's: 127.0.0.1 is not on the certificate.
        var wrongName = viaSocket
        wrongName.url = "https://127.0.0.1:1/bundle"
        #expect(failure(wrongName)?.name == "tls")
        var noSocket = viaSocket
        noSocket.unixSocket = server.file("absent.socket")
        #expect(failure(noSocket)?.name == "unreachable")
    }

    @Test func aCertificateNamingAnotherHostIsRefused() throws {
        try server.publish("{}")
        // The certificate names localhost only; 127.0.0.1 is the same server under another name.
        let mismatch = FetchRequest(url: "https://127.0.0.1:\(server.port)/bundle", caCertificate: server.file("ca.pem"),
                                    maximumBytes: 1 << 20)
        guard case .tls(let message) = failure(mismatch) else {
            Issue.record("a name mismatch was not a TLS failure: \(String(describing: failure(mismatch)))")
            return
        }
        #expect(message.contains("127.0.0.1"), "\(message)")
        // A CA that did not sign the server's certificate: refused too.
        var otherCA = request("bundle")
        otherCA.caCertificate = server.file("other-ca.pem")
        guard case .tls = failure(otherCA) else { Issue.record("an unknown issuer was accepted"); return }
        // Without a CA file the system's CAs are used, which do not know the test CA.
        var systemCAs = request("bundle")
        systemCAs.caCertificate = nil
        guard case .tls = failure(systemCAs) else { Issue.record("the test CA was trusted without being configured"); return }
        #expect(try server.requestedPaths().allSatisfy { $0 != "/bundle" })
    }

    @Test func mutualTLSPresentsTheClientCertificate() throws {
        var withClient = request("mtls")
        withClient.clientCertificate = server.file("client.pem")
        withClient.clientKey = server.file("client.key")
        #expect(try BundleFetcher().fetch(withClient) == .fetched(body: Array("client desk-42".utf8), etag: nil))
        #expect(failure(request("mtls")) == .httpStatus(403))
    }

    @Test func aServerThatIsDownIsUnreachable() throws {
        // A port that was just free: bind it, note it, close it.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: UInt32(0x7f000001).bigEndian),
                                  sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(probe, $0, length) == 0 ? getsockname(probe, $0, &length) : -1
        } }
        close(probe)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let down = FetchRequest(url: "https://localhost:\(port)/bundle", caCertificate: server.file("ca.pem"), maximumBytes: 1024)
        guard case .unreachable = failure(down) else { Issue.record("\(String(describing: failure(down)))"); return }
    }

    @Test func aSlowServerTimesOut() throws {
        var late = request("slow-start")
        late.totalTimeoutSeconds = 1
        guard case .timedOut = failure(late) else { Issue.record("\(String(describing: failure(late)))"); return }
        var trickle = request("trickle")
        trickle.lowSpeedBytesPerSecond = 100
        trickle.lowSpeedSeconds = 2
        guard case .timedOut = failure(trickle) else { Issue.record("\(String(describing: failure(trickle)))"); return }
    }

    @Test func aTruncatedOrOversizedBodyIsRefused() throws {
        guard case .truncated = failure(request("truncated")) else {
            Issue.record("\(String(describing: failure(request("truncated"))))")
            return
        }
        try server.publish(String(repeating: "z", count: 5000))
        #expect(failure(request("bundle", maximumBytes: 4999)) == .tooLarge(limit: 4999))  // announced length
        #expect(failure(request("unbounded", maximumBytes: 100_000)) == .tooLarge(limit: 100_000))  // counted
        #expect(failure(request("status/500")) == .httpStatus(500))
        #expect(failure(request("status/304")) == .httpStatus(304))  // a 304 we did not ask for is no answer
    }

    @Test func onlyHTTPSAndFileURLsAreFetched() throws {
        for url in ["http://localhost:\(server.port)/bundle", "ftp://localhost/x", "gopher://x"] {
            guard case .unsupportedURL = failure(FetchRequest(url: url, maximumBytes: 10)) else {
                Issue.record("\(url) was fetched")
                continue
            }
        }
        // The refusal names the URL as logs show it (`FleetConfiguration.redacted`): no password, no query.
        let refused = failure(FetchRequest(url: "http://user:secret@localhost/x?token=t0ken", maximumBytes: 10))
        #expect(refused == .unsupportedURL("http://<redacted>@localhost/x?<redacted>"))
        try server.publish("from a file")
        #expect(try BundleFetcher().fetch(FetchRequest(url: "file://" + server.file("bundle"), maximumBytes: 100))
            == .fetched(body: Array("from a file".utf8), etag: nil))
    }

    @Test func httpsProxyFromTheEnvironmentIsUsed() throws {
        try server.publish("via proxy")
        setenv("https_proxy", "http://127.0.0.1:\(server.proxyPort)", 1)
        let saved = getenv("no_proxy").map { String(cString: $0) }
        unsetenv("no_proxy")
        defer {
            unsetenv("https_proxy")
            if let saved { setenv("no_proxy", saved, 1) }
        }
        guard case .fetched(let body, _) = try BundleFetcher().fetch(request("bundle")) else {
            Issue.record("nothing fetched through the proxy")
            return
        }
        #expect(body == Array("via proxy".utf8))
        unsetenv("https_proxy")
        #expect(try server.log()["connects"] as? [String] == ["localhost:\(server.port)"])
    }

    @Test func cancellingStopsAFetchInProgressAndLaterOnes() throws {
        let fetcher = BundleFetcher()
        let started = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            started.signal()
            Thread.sleep(forTimeInterval: 0.5)
            fetcher.cancel()
        }
        started.wait()
        #expect(throws: FetchFailure.cancelled) { try fetcher.fetch(request("slow-start")) }
        #expect(throws: FetchFailure.cancelled) { try fetcher.fetch(request("bundle")) }
    }
}

@Suite struct StatusReporterTests {
    @Test func postsTheNewestDocumentAndRetriesAfterAFailure() throws {
        let server = try MDMServer()
        let failed = Mutex(0)
        let reporter = StatusReporter(request: FetchRequest(url: server.url("report"), caCertificate: server.file("ca.pem"),
                                                            maximumBytes: 1024),
                                      retryIntervalSeconds: 1) { outcome in
            if case .failure = outcome.result { failed.withLock { $0 += 1 } }
        }
        reporter.start()
        defer { reporter.stop() }
        reporter.submit(Array(#"{"n": 1}"#.utf8))
        try waitUntil { (try server.log()["posts"] as? [[String: Int]])?.count == 1 }
        #expect(FileManager.default.createFile(atPath: server.file("report-fails"), contents: nil))
        reporter.submit(Array(#"{"n": 2}"#.utf8))
        try waitUntil { failed.withLock { $0 } >= 1 }
        try FileManager.default.removeItem(atPath: server.file("report-fails"))
        // The failed document is sent again on retry (within the 1 s backoff ceiling).
        try waitUntil { (try server.log()["posts"] as? [[String: Int]])?.count == 2 }
        #expect(try server.log()["posts"] as? [[String: Int]] == [["n": 1], ["n": 2]])
        let posts = (try server.log()["requests"] as? [[String: Any]] ?? []).filter { $0["method"] as? String == "POST" }
        #expect(posts.allSatisfy { $0["contentType"] as? String == "application/json" })
    }
}

/// Waits up to 20 s for `condition`.
/// The kernel's timer on each established TCP connection to 127.0.0.1:`port` (/proc/net/tcp's
/// `tr` column): "keepalive" when SO_KEEPALIVE armed it on an idle connection, "none" without.
private func tcpTimers(toPort port: Int) throws -> [String] {
    let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
    let remote = "0100007F:" + String(format: "%04X", port)
    return table.split(separator: "\n").dropFirst().compactMap { row in
        let fields = row.split(separator: " ")
        guard fields.count > 5, fields[2] == remote, fields[3] == "01" else { return nil }
        return switch fields[5].prefix(2) { case "02": "keepalive"; case "00": "none"; default: String(fields[5]) }
    }
}

private func waitUntil(_ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw CancellationError() }
        Thread.sleep(forTimeInterval: 0.05)
    }
}
