#!/usr/bin/python3
"""An MDM stand-in for ProctorFleetTests: HTTPS on 127.0.0.1 with a CA and certificates made here
by openssl, plus a CONNECT proxy, so the fetcher is tested against real TLS and real sockets.

Usage: bundle_server.py [--trace] [--keep-alive] [--idle-timeout=SECONDS] [--port=PORT]
                        [--require-client-certificate] DIR
(DIR: an empty directory for the certificates and the bundle)
Prints "READY <https port> <proxy port>" once both listen; with --trace then one line per
request answered, "<method> <path> <status> <connection>" where connection is "full" (a new TLS
connection, full handshake), "resumed" (a new connection resuming an earlier TLS session) or
"kept" (a later request on a kept-alive connection), and for a POST to /report the body's size in
bytes after that; proctor-bench counts polls and status reports by them. The
server closes each connection after its answer (HTTP/1.0), as a server does with a client
that polls minutes apart; with --keep-alive it speaks HTTP/1.1 and keeps connections open,
with --idle-timeout=SECONDS only until one has been idle that long (as nginx's keepalive_timeout).
--port=PORT listens there instead of on a free port the kernel picks (a test starting another
server, with other certificates, where one was). --require-client-certificate refuses, in the
TLS handshake, every client without a certificate its CA (DIR/ca.pem) signed, on every path: an
MDM that requires mutual TLS.
The certificate names only DNS:localhost, so https://127.0.0.1:PORT/ is a name mismatch.

Paths: /bundle (DIR/bundle, with an ETag, 304 on If-None-Match), /slow-start (answers after
30 s), /trickle (one byte a second), /truncated (announces 1000 bytes, sends 10), /unbounded
(2 MB with no Content-Length), /mtls (200 only with a client certificate the CA signed),
/status/N (HTTP N), /log (JSON: the requests so far with their connection as --trace names it,
the proxy's CONNECTs and the bodies POSTed to /report, which answers 204 — or 500 while
DIR/report-fails exists).
"""
import hashlib, http.server, json, os, select, socket, ssl, subprocess, sys, threading, time

options = [argument for argument in sys.argv[1:] if argument.startswith("--")]
trace = "--trace" in options
keep_alive = "--keep-alive" in options
idle_timeout = next((float(o.split("=", 1)[1]) for o in options if o.startswith("--idle-timeout=")), None)
port = next((int(o.split("=", 1)[1]) for o in options if o.startswith("--port=")), 0)
require_client_certificate = "--require-client-certificate" in options
directory = sys.argv[-1]
log = {"requests": [], "connects": [], "posts": []}


def openssl(*arguments):
    subprocess.run(["openssl", *arguments], check=True, cwd=directory, capture_output=True)


def make_certificates():
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-subj", "/CN=Proctor test CA", "-days", "2")
    for name, extension in [("server", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n"),
                            ("client", "extendedKeyUsage=clientAuth\n")]:
        with open(os.path.join(directory, name + ".ext"), "w") as file:
            file.write(extension)
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", name + ".key",
                "-out", name + ".csr", "-subj", "/CN=" + ("localhost" if name == "server" else "desk-42"))
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", name + ".pem", "-days", "2", "-extfile", name + ".ext")
    # A second CA that signed nothing here: a client trusting only it must refuse the server.
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "other-ca.key",
            "-out", "other-ca.pem", "-subj", "/CN=Another CA", "-days", "2")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"
    timeout = idle_timeout  # a request line not read in time closes the connection (http.server)
    answered = 0  # on this connection (one handler per connection)

    def log_message(self, *arguments):
        pass

    def connection_kind(self):
        return "kept" if self.answered else ("resumed" if self.connection.session_reused else "full")

    def reply(self, status, body=b"", headers=()):
        if trace:
            print(self.command, self.path, status, self.connection_kind(), flush=True)
        self.answered += 1
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if not any(name == "Content-Length" for name, _ in headers):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        log["requests"].append({"path": self.path, "method": "POST", "contentType": self.headers.get("Content-Type"),
                                "connection": self.connection_kind()})
        if self.path != "/report":
            return self.reply(404, b"not found")
        if os.path.exists(os.path.join(directory, "report-fails")):
            return self.reply(500, b"failing")
        log["posts"].append(json.loads(body))
        if trace:
            print("POST /report 204", self.connection_kind(), len(body), flush=True)
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        log["requests"].append({"path": self.path, "ifNoneMatch": self.headers.get("If-None-Match"),
                                "userAgent": self.headers.get("User-Agent"), "connection": self.connection_kind()})
        if self.path == "/bundle":
            with open(os.path.join(directory, "bundle"), "rb") as file:
                body = file.read()
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                return self.reply(304, headers=[("ETag", etag), ("Content-Length", "0")])
            return self.reply(200, body, [("ETag", etag), ("Content-Type", "application/json")])
        if self.path == "/slow-start":
            time.sleep(30)
            return self.reply(200, b"late")
        if self.path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            for _ in range(60):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(1)
            return
        if self.path == "/truncated":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path == "/unbounded":
            self.send_response(200)  # HTTP/1.0 without Content-Length: the body ends when the connection does
            self.end_headers()
            for _ in range(32):
                self.wfile.write(b"y" * 65536)
            return
        if self.path == "/mtls":
            certificate = self.connection.getpeercert()
            if not certificate:
                return self.reply(403, b"no client certificate")
            subject = dict(part[0] for part in certificate["subject"])
            return self.reply(200, ("client " + subject["commonName"]).encode())
        if self.path.startswith("/status/"):
            return self.reply(int(self.path.split("/")[2]), b"status")
        if self.path == "/log":
            return self.reply(200, json.dumps(log).encode())
        self.reply(404, b"not found")


def tunnel(client):
    request = b""
    while b"\r\n\r\n" not in request:
        chunk = client.recv(4096)
        if not chunk:
            return client.close()
        request += chunk
    target = request.split(b" ")[1].decode()
    log["connects"].append(target)
    host, port = target.rsplit(":", 1)
    upstream = socket.create_connection(("127.0.0.1" if host == "localhost" else host, int(port)))
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    sockets = [client, upstream]
    while True:
        readable, _, _ = select.select(sockets, [], [], 60)
        if not readable:
            break
        done = False
        for source in readable:
            data = source.recv(65536)
            if not data:
                done = True
                break
            (upstream if source is client else client).sendall(data)
        if done:
            break
    client.close()
    upstream.close()


def proxy(listener):
    while True:
        client, _ = listener.accept()
        threading.Thread(target=tunnel, args=(client,), daemon=True).start()


class TLSServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def finish_request(self, request, client_address):
        # The handshake runs on the request's thread, so a stalled client cannot hold the others.
        try:
            connection = context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        super().finish_request(connection, client_address)


def exit_with_parent(parent):
    # The test process may die without stopping us: never outlive it.
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


threading.Thread(target=exit_with_parent, args=(os.getppid(),), daemon=True).start()
make_certificates()
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(directory, "server.pem"), os.path.join(directory, "server.key"))
context.load_verify_locations(os.path.join(directory, "ca.pem"))
context.verify_mode = ssl.CERT_REQUIRED if require_client_certificate else ssl.CERT_OPTIONAL
server = TLSServer(("127.0.0.1", port), Handler)
proxy_listener = socket.create_server(("127.0.0.1", 0))
threading.Thread(target=proxy, args=(proxy_listener,), daemon=True).start()
print("READY", server.server_address[1], proxy_listener.getsockname()[1], flush=True)
server.serve_forever()
