"""Who may register as an app: the identity rule against real processes, users, mount
namespaces and replaced executables (the daemon is the real proctord)."""
import os
import shutil
import sqlite3
import subprocess

import pytest

from conftest import Daemon, base_policy, raw_call, write_policy

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent_register.py")
PYTHON = "/usr/bin/python3"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def needs_root_and_user_namespaces():
    if os.geteuid() != 0:
        pytest.skip("running as another user needs root")
    probe = subprocess.run(NOBODY + ["unshare", "-Urm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unprivileged user namespaces are not available: {probe.stderr.decode().strip()}")


def readable_client(workdir):
    """The client script where an unprivileged user can read it."""
    path = os.path.join(workdir, "agent_register.py")
    shutil.copy(CLIENT, path)
    os.chmod(path, 0o644)
    return path


def start_daemon(workdir, apps):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy(**apps))
    return daemon.start()


def test_a_bind_mount_in_another_mount_namespace_does_not_make_another_file_the_app(workdir):
    """An unprivileged user mounts python over /usr/bin/sleep in a mount namespace of its
    own and runs it as /usr/bin/sleep: /proc/PID/exe then reads /usr/bin/sleep, but the
    file is python's, and the app is sleep's."""
    needs_root_and_user_namespaces()
    client = readable_client(workdir)
    daemon = start_daemon(workdir, {
        "io.proctor.test.sleep": {"state": "authorized", "match": {"executable": "/usr/bin/sleep", "users": ["*"]}},
        "io.proctor.test.python": {"state": "authorized", "match": {"executable": PYTHON, "users": ["*"]}},
    })
    try:
        attack = subprocess.run(NOBODY + ["unshare", "-Urm", "sh", "-c",
                                          'mount --bind "$0" /usr/bin/sleep && exec /usr/bin/sleep "$@"',
                                          PYTHON, client, daemon.agent, "io.proctor.test.sleep"],
                                capture_output=True, text=True, timeout=30)
        assert attack.stdout.strip() == "io.proctor.Agent.IdentityMismatch", (attack.stdout, attack.stderr)
        refusal = daemon.wait_for_log("not the file at /usr/bin/sleep")
        assert "Registration refused for io.proctor.test.sleep: pid" in refusal
        assert "runs /usr/bin/sleep (dev" in refusal, "the log shows the path the process claims and the file it runs"

        # The genuine file registers, from the same kind of namespace and user.
        genuine = subprocess.run(NOBODY + ["unshare", "-Urm", PYTHON, client, daemon.agent, "io.proctor.test.python"],
                                 capture_output=True, text=True, timeout=30)
        assert genuine.stdout.strip() == "registered", (genuine.stdout, genuine.stderr)
    finally:
        daemon.stop()


class App:
    """A long-running process of the copied executable that registers on request."""

    def __init__(self, executable, daemon, app_id):
        self.process = subprocess.Popen([executable, CLIENT, daemon.agent, app_id, "--repeat"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.first = self.process.stdout.readline().strip()

    def register(self):
        self.process.stdin.write("again\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def install(source, destination):
    """Puts a copy of `source` at `destination` as a package manager does: written beside
    it, then renamed over it, so a running process keeps the old file."""
    shutil.copy(source, destination + ".new")
    os.chmod(destination + ".new", 0o755)
    os.rename(destination + ".new", destination)


def start_with_a_trusted_copy_of_python(workdir):
    """proctord with one app, io.proctor.test.trusted, whose executable is a copy of python
    (another file than python's own); the daemon, the copy's path and the app's id."""
    trusted = os.path.join(workdir, "bin", "trusted")
    os.makedirs(os.path.dirname(trusted))
    install(os.path.realpath(PYTHON), trusted)
    app_id = "io.proctor.test.trusted"
    daemon = start_daemon(workdir, {app_id: {"state": "authorized", "match": {"executable": trusted, "users": ["*"]}}})
    return daemon, trusted, app_id


def pinned_pids(daemon):
    with sqlite3.connect(os.path.join(daemon.state_dir, "state.db")) as connection:
        return sorted(row[0] for row in connection.execute("SELECT pid FROM identity_pins"))


def test_a_verified_process_keeps_its_identity_after_an_upgrade_and_a_restart(workdir):
    executable = os.path.join(workdir, "bin", "notes")
    os.makedirs(os.path.dirname(executable))
    install(os.path.realpath(PYTHON), executable)
    app_id = "io.proctor.test.upgraded"
    daemon = start_daemon(workdir, {app_id: {"state": "authorized", "match": {"executable": executable, "users": ["*"]}}})
    verified = unverified = None
    try:
        verified = App(executable, daemon, app_id)
        assert verified.first == "registered"
        # Runs the same file but never registered before the upgrade.
        unverified = subprocess.Popen([executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)

        install(os.path.realpath(PYTHON), executable)
        assert os.readlink(f"/proc/{verified.process.pid}/exe") == executable + " (deleted)"
        daemon.stop()
        daemon.start()

        assert verified.register() == "registered"
        # A process of the old file that proctord never verified is not the app: its file is
        # no longer the one at the executable's path.
        unverified_exe = f"/proc/{unverified.pid}/exe"
        sneaky = subprocess.run(["sh", "-c", f'exec "$0" "$@"', unverified_exe, CLIENT, daemon.agent, app_id],
                                capture_output=True, text=True, timeout=30)
        assert sneaky.stdout.strip() == "io.proctor.Agent.IdentityMismatch", (sneaky.stdout, sneaky.stderr)
        # A new process must match the file on disk: the new one does, another file does not.
        fresh = App(executable, daemon, app_id)
        assert fresh.first == "registered"
        fresh.stop()
        other = os.path.join(workdir, "bin", "other")
        install(os.path.realpath(PYTHON), other)
        stranger = subprocess.run([other, CLIENT, daemon.agent, app_id], capture_output=True, text=True, timeout=30)
        assert stranger.stdout.strip() == "io.proctor.Agent.IdentityMismatch", (stranger.stdout, stranger.stderr)
        assert verified.process.pid in pinned_pids(daemon)

        # Pins die with their process: gone after the next start.
        verified.stop()
        verified = None
        daemon.stop()
        daemon.start()
        daemon.stop()
        assert pinned_pids(daemon) == []
    finally:
        for app in (verified,):
            if app:
                app.stop()
        if unverified:
            unverified.kill()
            unverified.wait()
        daemon.stop()


def test_a_pin_holds_for_the_path_as_written_not_for_another_unicode_form_of_it(workdir):
    """A pin remembers the path its process was verified against; the same text in another
    Unicode form ("café" composed, then decomposed) is another path to the kernel, here another
    file: a process pinned to the first is not the app once the policy names the second."""
    composed = os.path.join(workdir, "bin", "caf\u00e9")
    decomposed = os.path.join(workdir, "bin", "cafe\u0301")
    os.makedirs(os.path.dirname(composed))
    install(os.path.realpath(PYTHON), composed)
    install(os.path.realpath(PYTHON), decomposed)
    app_id = "io.proctor.test.cafe"

    def entry(executable):
        return {app_id: {"state": "authorized", "match": {"executable": executable, "users": ["*"]}}}
    daemon = start_daemon(workdir, entry(composed))
    app = None
    try:
        app = App(composed, daemon, app_id)
        assert app.first == "registered"
        write_policy(daemon.config_dir, base_policy("test.2", **entry(decomposed)))
        assert raw_call(daemon.admin, "io.proctor.Admin.Reload")["parameters"]["result"]["ok"] is True
        assert app.register() == "io.proctor.Agent.IdentityMismatch"
        fresh = App(decomposed, daemon, app_id)
        assert fresh.first == "registered"
        fresh.stop()
    finally:
        if app:
            app.stop()
        daemon.stop()


# Connects, then lets another program send on the connection: argv SOCKET PROGRAM APP_ID.
HAND_ON = f"""
import socket, subprocess, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.set_inheritable(True)
sent = subprocess.run([sys.argv[2], {CLIENT!r}, f"fd:{{s.fileno()}}", sys.argv[3]], pass_fds=[s.fileno()],
                      capture_output=True, text=True, timeout=30)
print(sent.stdout.strip() or sent.stderr, flush=True)
"""

# The scripts below run as programs of their own: one call on a socket, its reply parsed.
CALL = """
import json, socket, subprocess, sys

def call(s, method, parameters):
    s.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\\0")
    data = b""
    while not data.endswith(b"\\0"):
        data += s.recv(65536)
    return json.loads(data[:-1])
"""

# The connector keeps its connection while a child (argv TRUSTED) registers on it and makes
# one Decide; then the connector itself calls Decide with the child's session. Prints the
# child's outcome and the connector's: argv SOCKET TRUSTED APP_ID.
KEEP_AND_USE = CALL + """
if sys.argv[1] == "child":
    s = socket.socket(fileno=int(sys.argv[2]))
    s.settimeout(10)  # the descriptor is the connector's, non-blocking: wait in poll
    registered = call(s, "io.proctor.Agent.Register", {"appId": sys.argv[3]})
    session = registered["parameters"]["session"]
    decided = call(s, "io.proctor.Agent.Decide", {"session": session, "action": "print"})
    print(session, decided.get("error", "decided"), flush=True)
    s.detach()
    sys.exit(0)
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.set_inheritable(True)
child = subprocess.run([sys.argv[2], "-c", sys.argv[4], "child", str(s.fileno()), sys.argv[3]], pass_fds=[s.fileno()],
                       capture_output=True, text=True, timeout=30)
if not child.stdout.strip():
    sys.exit("child: " + child.stderr)
session, outcome = child.stdout.split()
reply = call(s, "io.proctor.Agent.Decide", {"session": session, "action": "print"})
print(outcome, reply.get("error", "decided"), reply.get("parameters", {}).get("reason", ""), flush=True)
"""

# Writes the start of a Register, forks, and lets the child write the rest: argv SOCKET APP_ID.
TWO_WRITERS = """
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
message = json.dumps({"method": "io.proctor.Agent.Register", "parameters": {"appId": sys.argv[2]}}).encode() + b"\\0"
s.sendall(message[:20])
child = os.fork()
if child == 0:
    s.sendall(message[20:])
    os._exit(0)
os.waitpid(child, 0)
data = b""
while not data.endswith(b"\\0"):
    data += s.recv(65536)
reply = json.loads(data[:-1])
print(reply.get("error", "registered"), reply.get("parameters", {}).get("reason", ""), flush=True)
"""


def test_the_process_that_sends_register_is_checked_not_the_one_that_connected(workdir):
    """Issue 11, exec after connect: a connection outlives the process image that opened it
    (fork, exec, descriptor passing). The identity is that of the process that sent Register."""
    daemon, trusted, app_id = start_with_a_trusted_copy_of_python(workdir)

    def connect_then_hand_on(connector, sender):
        done = subprocess.run([connector, "-c", HAND_ON, daemon.agent, sender, app_id],
                              capture_output=True, text=True, timeout=60)
        return done.stdout.strip()

    try:
        # An untrusted program connects; the trusted one sends Register: it is the app.
        assert connect_then_hand_on(PYTHON, trusted) == "registered"
        # The trusted program connects; an untrusted one sends Register on its connection.
        assert connect_then_hand_on(trusted, PYTHON) == "io.proctor.Agent.IdentityMismatch"
        refusal = daemon.wait_for_log(f"not the file at {trusted}")
        assert f"Registration refused for {app_id}: pid" in refusal

        # Two processes each wrote part of one Register: no one process sent it.
        mixed = subprocess.run([trusted, "-c", TWO_WRITERS, daemon.agent, app_id],
                               capture_output=True, text=True, timeout=60)
        assert mixed.stdout.startswith("io.proctor.Agent.IdentityMismatch"), (mixed.stdout, mixed.stderr)
        assert "written by more than one process" in mixed.stdout

        # A session is the registering process's own: the untrusted connector that kept the
        # connection cannot use the session its trusted child opened on it.
        kept = subprocess.run([PYTHON, "-c", KEEP_AND_USE, daemon.agent, trusted, app_id, KEEP_AND_USE],
                              capture_output=True, text=True, timeout=60)
        assert kept.stdout.startswith("decided io.proctor.Agent.IdentityMismatch"), (kept.stdout, kept.stderr)
        assert "belongs to the process that registered it" in kept.stdout
    finally:
        daemon.stop()


# Registers, then sends Decide calls on its connection (the direct path answers a read that is
# one whole call): its own; one it began and a forked child finished; one a forked child sent
# whole; one the parent and a forked child each sent whole, back to back, in one write each;
# its own again. Prints the outcomes: argv SOCKET APP_ID.
DECIDE_SENDERS = CALL + """
import os
def reply(s):
    data = b""
    while not data.endswith(b"\\0"):
        data += s.recv(65536)
    return [json.loads(part) for part in data[:-1].split(b"\\0")]

def outcome(message):
    return message.get("error", "decided")

s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
session = call(s, "io.proctor.Agent.Register", {"appId": sys.argv[2]})["parameters"]["session"]
decide = json.dumps({"method": "io.proctor.Agent.Decide", "parameters": {"session": session, "action": "print"}}).encode() + b"\\0"

def in_child(data):
    child = os.fork()
    if child == 0:
        s.sendall(data)
        os._exit(0)
    os.waitpid(child, 0)

outcomes = [outcome(call(s, "io.proctor.Agent.Decide", {"session": session, "action": "print"}))]
s.sendall(decide[:20])
in_child(decide[20:])
outcomes.append(outcome(reply(s)[0]))
in_child(decide)
outcomes.append(outcome(reply(s)[0]))
s.sendall(decide)
in_child(decide)
replies = reply(s)
while len(replies) < 2:
    replies += reply(s)
outcomes += [outcome(message) for message in replies]
outcomes.append(outcome(call(s, "io.proctor.Agent.Decide", {"session": session, "action": "print"})))
print(*outcomes, flush=True)
"""


def test_each_decide_is_checked_against_the_process_that_sent_all_its_bytes(workdir):
    """Decide's direct path (a read that is one whole call, answered without the frame
    decoder) and the general one (split or pipelined calls) both hold a call to the one
    process that wrote all its bytes: a session's own process is answered, a forked child
    sharing the connection is refused, whether it wrote the whole call or its end."""
    daemon, trusted, app_id = start_with_a_trusted_copy_of_python(workdir)
    try:
        done = subprocess.run([trusted, "-c", DECIDE_SENDERS, daemon.agent, app_id], capture_output=True, text=True,
                              timeout=60)
        mismatch = "io.proctor.Agent.IdentityMismatch"
        assert done.stdout.split() == ["decided", mismatch, mismatch, "decided", mismatch, "decided"], (done.stdout,
                                                                                                       done.stderr)
    finally:
        daemon.stop()


# A registered process registers once more on its connection, then hands the connection to a
# child (the same program) that sends Register twice: argv parent SOCKET APP_ID SCRIPT.
# Prints the four outcomes, then the reason of the child's first.
REGISTER_AGAIN = CALL + """
def register(s):
    reply = call(s, "io.proctor.Agent.Register", {"appId": sys.argv[3]})
    return reply.get("error", "registered"), reply.get("parameters", {}).get("reason", "")

if sys.argv[1] == "child":
    s = socket.socket(fileno=int(sys.argv[2]))
    s.settimeout(10)
    (first, reason), (second, _) = register(s), register(s)
    print(first, second, "|", reason, flush=True)
    s.detach()
    sys.exit(0)
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[2])
own = [register(s)[0], register(s)[0]]
s.set_inheritable(True)
child = subprocess.run([sys.executable, "-c", sys.argv[4], "child", str(s.fileno()), sys.argv[3]], pass_fds=[s.fileno()],
                       capture_output=True, text=True, timeout=30)
print(*own, child.stdout.strip() or child.stderr, flush=True)
"""


def test_register_on_a_connection_that_has_a_session_is_verified_on_a_pidfd(workdir):
    """Once a connection has a session, messages on it come without a pidfd per message (the
    session is checked against its registering process instead). A further Register from that
    process is verified on the session's pidfd; one from another process is refused once,
    with the connection taking pidfds again, so that sending it again verifies it."""
    daemon, trusted, app_id = start_with_a_trusted_copy_of_python(workdir)
    try:
        done = subprocess.run([trusted, "-c", REGISTER_AGAIN, "parent", daemon.agent, app_id, REGISTER_AGAIN],
                              capture_output=True, text=True, timeout=60)
        outcomes, _, reason = done.stdout.strip().partition(" | ")
        assert outcomes.split() == ["registered", "registered", "io.proctor.Agent.IdentityMismatch", "registered"], \
            (done.stdout, done.stderr)
        assert "send Register again" in reason, reason
    finally:
        daemon.stop()


# Registers and decides once, then forks a helper that keeps the connection, and exits. The
# helper waits until the registered process is reaped (its pid free), then forks until a child
# gets that pid (set through ns_last_pid), and that child calls Decide with the session.
# Prints the registered process's outcome, then the impostor's and its reason (or "no-reuse"):
# argv SOCKET APP_ID.
PID_REUSE = CALL + """
import os, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
session = call(s, "io.proctor.Agent.Register", {"appId": sys.argv[2]})["parameters"]["session"]
own = call(s, "io.proctor.Agent.Decide", {"session": session, "action": "print"}).get("error", "decided")
registered = os.getpid()
if os.fork() != 0:
    os._exit(0)
deadline = time.monotonic() + 20
while os.path.exists(f"/proc/{registered}") and time.monotonic() < deadline:
    time.sleep(0.001)
for attempt in range(500):
    with open("/proc/sys/kernel/ns_last_pid", "w") as counter:
        counter.write(str(registered - 1))
    child = os.fork()
    if child == 0:
        if os.getpid() != registered:
            os._exit(3)
        reply = call(s, "io.proctor.Agent.Decide", {"session": session, "action": "print"})
        print(own, reply.get("error", "decided"), reply.get("parameters", {}).get("reason", ""), flush=True)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    if os.WEXITSTATUS(status) == 0:
        break
else:
    print(own, "no-reuse", flush=True)
"""


def test_a_process_that_gets_the_pid_of_a_registered_one_that_exited_cannot_use_its_session(workdir):
    """The exec-and-pid-reuse attack: a registered process exits, a process that kept its
    connection forks until a child gets the registered pid, and that child calls Decide on the
    session. The kernel stamps the child's message with the registered pid; proctord refuses it
    because the registered process was seen exited after the message was read."""
    if os.geteuid() != 0:
        pytest.skip("setting the next pid (ns_last_pid) needs root")
    daemon, trusted, app_id = start_with_a_trusted_copy_of_python(workdir)
    try:
        registered = subprocess.Popen([trusted, "-c", PID_REUSE, daemon.agent, app_id], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
        registered.wait(timeout=30)  # reaps it at once: its pid is free for the helper's children
        out, err = registered.communicate(timeout=60)
        own, impostor, reason = (out.strip().split(" ", 2) + ["", ""])[:3]
        assert own == "decided", (out, err)
        assert impostor == "io.proctor.Agent.IdentityMismatch", (out, err)
        assert "belongs to the process that registered it" in reason, reason
    finally:
        daemon.stop()
