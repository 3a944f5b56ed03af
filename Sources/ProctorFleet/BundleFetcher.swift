import CCurl
import Glibc
import Synchronization

/// Where and how to fetch a bundle: `[Source]` of proctord.conf plus the limits.
public struct FetchRequest: Sendable, Hashable {
    /// `https://...`, or `file:///...` (tests, bundles copied by other means).
    public var url: String
    public var caCertificate: String?
    public var clientCertificate: String?
    public var clientKey: String?
    /// An AF_UNIX socket to connect to instead of the URL's host (`FleetConfiguration.Source.unixSocket`).
    public var unixSocket: String?
    /// The ETag of the last bundle fetched: sent as `If-None-Match`, so an unchanged bundle is a 304.
    public var etag: String?
    /// The largest body accepted (the policy size limit, as a bundle).
    public var maximumBytes: Int
    /// When set, the request is a POST of this JSON document (status reports) and any 2xx
    /// answer is success.
    public var jsonBody: [UInt8]?
    /// Seconds to establish the connection, TLS included.
    public var connectTimeoutSeconds = 15
    /// Seconds for the whole exchange.
    public var totalTimeoutSeconds = 120
    /// A transfer slower than `lowSpeedBytesPerSecond` for `lowSpeedSeconds` is abandoned: a
    /// server trickling bytes cannot hold the fetch thread until the total timeout.
    public var lowSpeedBytesPerSecond = 1024
    public var lowSpeedSeconds = 20
    /// The longest a kept connection may have been idle and still carry this request
    /// (`CURLOPT_MAXAGE_CONN`; libcurl's own default, 118 s, would drop it before a poll 300 s
    /// later even where the server keeps it open). `BundlePoller` sets its longest interval.
    public var connectionIdleSeconds = 118

    public init(url: String, caCertificate: String? = nil, clientCertificate: String? = nil, clientKey: String? = nil,
                etag: String? = nil, maximumBytes: Int) {
        self.url = url
        self.caCertificate = caCertificate
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
        self.etag = etag
        self.maximumBytes = maximumBytes
    }
}

/// What a fetch brought.
public enum FetchResult: Sendable, Hashable {
    /// A new body, with the server's ETag if it gave one.
    case fetched(body: [UInt8], etag: String?)
    /// 304: the bundle is the one fetched last time.
    case notModified
}

/// Why a fetch failed; `name` is stable (logs, Status).
public enum FetchFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The URL is not `https://` or `file://` (libcurl was told to refuse any other protocol).
    case unsupportedURL(String)
    /// The server could not be resolved or connected to.
    case unreachable(String)
    /// TLS failed: the certificate does not verify with the CAs or does not name the host,
    /// the handshake failed, or the client certificate was refused.
    case tls(String)
    /// A timeout (connect, total or low speed) expired.
    case timedOut(String)
    /// The body ended before the length the server announced.
    case truncated(String)
    /// The body is larger than `limit` bytes.
    case tooLarge(limit: Int)
    /// The server answered with an HTTP status other than 200 or 304.
    case httpStatus(Int)
    /// The fetch was stopped (proctord is stopping or reloading).
    case cancelled
    /// Another libcurl error.
    case transfer(code: Int, message: String)

    public var name: String {
        switch self {
        case .unsupportedURL: "unsupported-url"
        case .unreachable: "unreachable"
        case .tls: "tls"
        case .timedOut: "timed-out"
        case .truncated: "truncated"
        case .tooLarge: "too-large"
        case .httpStatus: "http-status"
        case .cancelled: "cancelled"
        case .transfer: "transfer"
        }
    }

    public var description: String {
        switch self {
        case .unsupportedURL(let message): "only https:// and file:// URLs are fetched: \(message)"
        case .unreachable(let message): "cannot reach the server: \(message)"
        case .tls(let message): "TLS verification failed: \(message)"
        case .timedOut(let message): "timed out: \(message)"
        case .truncated(let message): "the body is truncated: \(message)"
        case .tooLarge(let limit): "the body is larger than \(limit) bytes"
        case .httpStatus(let status): "the server answered HTTP \(status)"
        case .cancelled: "cancelled"
        case .transfer(let code, let message): "transfer failed (libcurl error \(code)): \(message)"
        }
    }
}

/// Fetches bundles with libcurl, one at a time, blocking: it belongs on a thread of its own
/// (see `BundlePoller`), never on the event loop. TLS verification is always on. One libcurl
/// handle serves every fetch: the connection is kept while the server keeps it open and for up
/// to `FetchRequest.connectionIdleSeconds` (a 304 then costs no handshake), a new connection resumes the last TLS session with the server
/// (the handle's session cache), and the parsed CA store is kept — until the CA file
/// changes, which takes a new handle, so no session or store from the old CAs is used.
/// Proxies come from the environment as libcurl reads them (`https_proxy`, `no_proxy`).
///
/// `fetch` is called from one thread at a time (it alone touches the handle); `cancel` from any thread.
public final class BundleFetcher: @unchecked Sendable {
    private typealias Easy = Result<(curl: UnsafePointer<ccurl_library>, handle: UnsafeMutableRawPointer), FetchFailure>

    /// libcurl and this fetcher's handle, or why there is none. Only `fetch` replaces it.
    private var easy: Easy
    /// The CA file the handle's cached CA store was read from, and its identity then: libcurl
    /// keeps the parsed store with the handle for as long as it lives (`CURLOPT_CA_CACHE_TIMEOUT`
    /// -1), so a changed file (new inode, size or modification time) takes a new handle.
    private var caFile: (path: String, stamp: FileStamp?)?
    private let cancellation = Cancellation()

    public init() { easy = Self.makeHandle() }

    deinit { if case .success(let (curl, handle)) = easy { ccurl_easy_cleanup(curl, handle) } }

    private static func makeHandle() -> Easy {
        library.flatMap { curl in
            guard let handle = ccurl_easy_init(curl) else {
                return .failure(.transfer(code: Int(CURLE_FAILED_INIT.rawValue), message: "curl_easy_init failed"))
            }
            return .success((curl, handle))
        }
    }

    /// Replaces the handle (its connection, TLS sessions and CA store) when the CA file it will
    /// use is not the one it read: a new `CACertificate=` file, or the system bundle updated,
    /// decides from the next fetch on, and no session resumed from the old CAs' time skips it.
    private func renewHandleIfTheCAFileChanged(_ request: FetchRequest) {
        guard case .success(let (curl, handle)) = easy else { return }
        guard let path = request.caCertificate ?? ccurl_default_ca_file(curl, handle).map({ String(cString: $0) }) else { return }
        let stamp = FileStamp(path)
        defer { caFile = (path, stamp) }
        guard let previous = caFile, previous.path != path || previous.stamp != stamp else { return }
        ccurl_easy_cleanup(curl, handle)
        easy = Self.makeHandle()
    }

    /// libcurl, loaded by the process's first fetcher (see `CCurl`'s shim.h: only a proctord
    /// that fetches maps it), or why it could not be loaded. Immutable once made.
    nonisolated(unsafe) private static let library: Result<UnsafePointer<ccurl_library>, FetchFailure> = {
        var error: UnsafePointer<CChar>?
        guard let curl = ccurl_open(&error) else {
            return .failure(.transfer(code: Int(CURLE_FAILED_INIT.rawValue),
                                      message: "cannot load libcurl.so.4: " + (error.map { String(cString: $0) } ?? "unknown error")))
        }
        return .success(curl)
    }()

    /// Abandons the fetch in progress, if any, and makes every later one fail at once with
    /// `.cancelled`: for stopping the thread that fetches.
    public func cancel() { cancellation.flag.store(true, ordering: .relaxed) }

    /// Fetches `request.url`.
    public func fetch(_ request: FetchRequest) throws(FetchFailure) -> FetchResult {
        let lowered = request.url.lowercased()
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("file://") else {
            throw .unsupportedURL(FleetConfiguration.redacted(request.url))
        }
        guard !cancellation.flag.load(ordering: .relaxed) else { throw .cancelled }
        renewHandleIfTheCAFileChanged(request)
        let (curl, handle) = try easy.get()
        let transfer = Transfer(maximumBytes: request.maximumBytes, cancellation: cancellation)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var headers: UnsafeMutablePointer<curl_slist>? = nil
        if let etag = request.etag { headers = ccurl_slist_append(curl, headers, "If-None-Match: \(etag)") }
        if request.jsonBody != nil { headers = ccurl_slist_append(curl, headers, "Content-Type: application/json") }
        defer { ccurl_slist_free_all(curl, headers) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        // Keeps the connection cache, TLS sessions and the CA store, forgets the last request's options.
        ccurl_easy_reset(curl, handle)
        let code = errorBuffer.withUnsafeMutableBufferPointer { buffer -> CURLcode in
            for (option, value) in [
                (CURLOPT_NOSIGNAL, 1), (CURLOPT_SSL_VERIFYPEER, 1), (CURLOPT_SSL_VERIFYHOST, 2),
                (CURLOPT_FOLLOWLOCATION, 1), (CURLOPT_MAXREDIRS, 5), (CURLOPT_NOPROGRESS, 0),
                (CURLOPT_CONNECTTIMEOUT, request.connectTimeoutSeconds), (CURLOPT_TIMEOUT, request.totalTimeoutSeconds),
                (CURLOPT_LOW_SPEED_LIMIT, request.lowSpeedBytesPerSecond), (CURLOPT_LOW_SPEED_TIME, request.lowSpeedSeconds),
                (CURLOPT_MAXAGE_CONN, request.connectionIdleSeconds),
                // The parsed CA store is kept for the handle's life, not re-read every 24 h (libcurl's
                // default; ≈ 24 ms of CPU for Debian's 139-CA bundle): the fetcher renews the handle
                // itself when the CA file changes (`renewHandleIfTheCAFileChanged`).
                (CURLOPT_CA_CACHE_TIMEOUT, -1),
                // TCP keep-alive probes on a kept connection, after 60 s idle, then every 20 s: NATs
                // and load balancers that forget idle flows (Azure after 4 min, AWS NAT after 350 s)
                // keep it, and a server that vanished without closing is found dead within 60 + 9 × 20 s
                // rather than by a poll's request timing out. They do not make a server keep an idle
                // HTTP connection: that is its own timeout.
                (CURLOPT_TCP_KEEPALIVE, 1), (CURLOPT_TCP_KEEPIDLE, 60), (CURLOPT_TCP_KEEPINTVL, 20),
            ] { _ = ccurl_setopt_long(curl, handle, option, value) }
            _ = ccurl_setopt_offset(curl, handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maximumBytes))
            _ = ccurl_setopt_string(curl, handle, CURLOPT_URL, request.url)
            // Redirects may not leave HTTPS; only the configured URL may be a file.
            _ = ccurl_setopt_string(curl, handle, CURLOPT_PROTOCOLS_STR, "https,file")
            _ = ccurl_setopt_string(curl, handle, CURLOPT_REDIR_PROTOCOLS_STR, "https")
            _ = ccurl_setopt_string(curl, handle, CURLOPT_USERAGENT, "proctord")
            if let path = request.caCertificate { _ = ccurl_setopt_string(curl, handle, CURLOPT_CAINFO, path) }
            // The CA file only (CACertificate=, or Debian's /etc/ssl/certs/ca-certificates.crt, which
            // holds every CA of /etc/ssl/certs), not also Debian's default CA directory: libcurl then
            // keeps the parsed CA store between connections (CURLOPT_CA_CACHE_TIMEOUT above) instead
            // of reading and decoding the PEM file for every new connection.
            _ = ccurl_setopt_pointer(curl, handle, CURLOPT_CAPATH, nil)
            if let path = request.clientCertificate { _ = ccurl_setopt_string(curl, handle, CURLOPT_SSLCERT, path) }
            if let path = request.clientKey { _ = ccurl_setopt_string(curl, handle, CURLOPT_SSLKEY, path) }
            if let path = request.unixSocket {
                _ = ccurl_setopt_string(curl, handle, CURLOPT_UNIX_SOCKET_PATH, path)
                _ = ccurl_setopt_string(curl, handle, CURLOPT_NOPROXY, "*")  // the socket is the way out, not a proxy
            }
            _ = ccurl_setopt_list(curl, handle, CURLOPT_HTTPHEADER, headers)
            if let body = request.jsonBody {
                // COPYPOSTFIELDS: libcurl keeps its own copy, so no Swift buffer must outlive this call.
                _ = ccurl_setopt_offset(curl, handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
                _ = body.withUnsafeBytes { ccurl_setopt_pointer(curl, handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress)) }
            }
            _ = ccurl_setopt_pointer(curl, handle, CURLOPT_ERRORBUFFER, buffer.baseAddress)
            _ = ccurl_setopt_data_callback(curl, handle, CURLOPT_WRITEFUNCTION, { data, size, count, context in
                Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().receiveBody(data!, size * count)
            })
            _ = ccurl_setopt_pointer(curl, handle, CURLOPT_WRITEDATA, context)
            _ = ccurl_setopt_data_callback(curl, handle, CURLOPT_HEADERFUNCTION, { data, size, count, context in
                Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().receiveHeader(data!, size * count)
            })
            _ = ccurl_setopt_pointer(curl, handle, CURLOPT_HEADERDATA, context)
            _ = ccurl_setopt_progress_callback(curl, handle, { context, _, _, _, _ in
                Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().cancellation.flag.load(ordering: .relaxed) ? 1 : 0
            })
            _ = ccurl_setopt_pointer(curl, handle, CURLOPT_XFERINFODATA, context)
            return ccurl_easy_perform(curl, handle)
        }
        _ = ccurl_setopt_pointer(curl, handle, CURLOPT_ERRORBUFFER, nil)
        let message = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard code == CURLE_OK else { throw Self.failure(code, message: message, transfer: transfer, curl: curl) }
        var status = 0
        _ = ccurl_getinfo_long(curl, handle, CURLINFO_RESPONSE_CODE, &status)
        switch status {
        case 200...299 where request.jsonBody != nil: return .fetched(body: transfer.body, etag: nil)
        case 0, 200: return .fetched(body: transfer.body, etag: transfer.etag)  // 0: file://
        case 304 where request.etag != nil: return .notModified
        default: throw .httpStatus(status)
        }
    }

    private static func failure(_ code: CURLcode, message: String, transfer: Transfer,
                                curl: UnsafePointer<ccurl_library>) -> FetchFailure {
        let detail = message.isEmpty ? String(cString: ccurl_easy_strerror(curl, code)) : message
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL: return .unsupportedURL(detail)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT: return .unreachable(detail)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT:
            return .tls(detail)
        case CURLE_OPERATION_TIMEDOUT: return .timedOut(detail)
        case CURLE_PARTIAL_FILE: return .truncated(detail)
        case CURLE_FILESIZE_EXCEEDED: return .tooLarge(limit: transfer.maximumBytes)
        case CURLE_WRITE_ERROR where transfer.exceeded: return .tooLarge(limit: transfer.maximumBytes)
        case CURLE_ABORTED_BY_CALLBACK: return .cancelled
        case CURLE_RECV_ERROR where detail.contains("SSL"), CURLE_SEND_ERROR where detail.contains("SSL"):
            return .tls(detail)  // a server refusing our client certificate ends the handshake this way
        default: return .transfer(code: Int(code.rawValue), message: detail)
        }
    }
}

/// A file's identity and version: what `stat` says about it.
private struct FileStamp: Equatable {
    var device: UInt64, inode: UInt64, size: Int, modified: Int, modifiedNanoseconds: Int

    /// nil when the file cannot be stat'ed (libcurl will say why when it reads it).
    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int(info.st_size)
        modified = Int(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
    }
}

/// Whether fetching was cancelled, shared between the fetching thread and `cancel()`'s.
private final class Cancellation: Sendable {
    let flag = Atomic<Bool>(false)
}

/// One transfer's state, which libcurl's callbacks fill in.
private final class Transfer {
    let maximumBytes: Int
    let cancellation: Cancellation
    var body: [UInt8] = []
    var etag: String?
    var exceeded = false

    init(maximumBytes: Int, cancellation: Cancellation) {
        self.maximumBytes = maximumBytes
        self.cancellation = cancellation
    }

    /// Appends `count` bytes; a body over the limit stops the transfer (returning less than `count`).
    func receiveBody(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        guard body.count + count <= maximumBytes else {
            exceeded = true
            return 0
        }
        body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: count))
        return count
    }

    /// Reads the ETag; a new status line (after a redirect) starts over.
    func receiveHeader(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
        if line.hasPrefix("HTTP/") { etag = nil }
        if line.count > 5, line.prefix(5).lowercased() == "etag:" {
            let value = line.dropFirst(5).trimmingCharacters(in: " \t\r\n")
            if !value.isEmpty, value.utf8.count <= 256 { etag = value }
        }
        return count
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = self
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
