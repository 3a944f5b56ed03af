"""Fixtures that run the real proctord binary for the Python-client tests.

The daemon is started exactly as an administrator would start it by hand (foreground,
its own runtime, state and config directories), and the tests wait for its real
readiness signal: a NOTIFY_SOCKET the test listens on receives READY=1.
"""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from varlink_raw import exchange

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bin_path():
    path = os.environ.get("PROCTOR_BIN")
    if path:
        return path
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPO, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


BIN = bin_path()


def this_executable():
    """What /proc/PID/exe says for this interpreter: the identity proctord will see."""
    return os.path.realpath(f"/proc/{os.getpid()}/exe")


def write_policy(config_dir, policy, name="00-test.json"):
    policy_dir = os.path.join(config_dir, "policy.d")
    os.makedirs(policy_dir, exist_ok=True)
    with open(os.path.join(policy_dir, name), "w") as f:
        json.dump(policy, f, indent=2)


def base_policy(version="test.1", **apps):
    """A policy whose apps this test process may register as."""
    entries = {
        "io.proctor.test.notes": {
            "state": "authorized",
            "match": {"executable": this_executable(), "users": ["*"]},
            "config": {"serverURL": "https://notes.example.com", "syncDays": 14},
            "dlp": {"clipboard": {"level": "managed"}, "print": "block"},
        },
        "io.proctor.test.mail": {
            "state": "authorized",
            "match": {"executable": this_executable(), "users": ["root"]},
            "dlp": {"share": {"send": "managed", "receive": "any"}},
        },
        "io.proctor.test.blocked": {
            "state": "blocked",
            "match": {"executable": this_executable(), "users": ["*"]},
        },
        "io.proctor.test.other-exe": {
            "state": "authorized",
            "match": {"executable": "/usr/bin/false", "users": ["*"]},
        },
    }
    entries.update(apps)
    return {"schema": 1, "version": version, "apps": entries}


class Daemon:
    def __init__(self, root, extra_args=()):
        self.root = root
        self.config_dir = os.path.join(root, "config")
        self.state_dir = os.path.join(root, "state")
        self.runtime_dir = os.path.join(root, "run")
        self.extra_args = list(extra_args)
        self.process = None
        self.stderr_path = os.path.join(root, "proctord.stderr")

    @property
    def agent(self):
        return os.path.join(self.runtime_dir, "io.proctor.Agent")

    @property
    def admin(self):
        return os.path.join(self.runtime_dir, "io.proctor.Admin")

    def command(self):
        return [os.path.join(BIN, "proctord"), "--config-dir", self.config_dir,
                "--state-dir", self.state_dir, "--runtime-dir", self.runtime_dir,
                "--log-target", "stderr"] + self.extra_args

    def start(self, wait_ready=True, timeout=20):
        notify_path = os.path.join(self.root, "notify.sock")
        if os.path.exists(notify_path):
            os.unlink(notify_path)
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        env = dict(os.environ, NOTIFY_SOCKET=notify_path)
        self.stderr = open(self.stderr_path, "ab")
        self.process = subprocess.Popen(self.command(), env=env, stdout=subprocess.DEVNULL,
                                        stderr=self.stderr)
        self.notifications = []
        if wait_ready:
            deadline = time.monotonic() + timeout
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.process.poll() is not None:
                    raise RuntimeError(f"proctord did not become ready: {self.log()}")
                notify.settimeout(min(remaining, 0.5))
                try:
                    message = notify.recv(4096).decode()
                except socket.timeout:
                    continue
                self.notifications.append(message)
                if "READY=1" in message.split("\n"):
                    break
        # Kept open and drained, as systemd does: later STATUS= updates must reach a listener,
        # and a full datagram queue would block the daemon's sd_notify.
        self.notify = notify
        notify.settimeout(None)
        threading.Thread(target=self._drain_notifications, args=(notify,), daemon=True).start()
        return self

    def _drain_notifications(self, notify):
        # Reads the socket it was given: stop() clears self.notify, and a restart makes another.
        while True:
            try:
                message = notify.recv(4096)
            except OSError:
                return
            if not message:
                return
            self.notifications.append(message.decode())

    def log(self):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_for_log(self, text, timeout=10):
        """The log once it holds `text`: proctord logs through a queue that a thread of
        its own writes out, so a line can land just after the reply that caused it."""
        deadline = time.monotonic() + timeout
        while text not in self.log() and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.log()

    def stop(self, sig=signal.SIGTERM):
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if getattr(self, "stderr", None):
            self.stderr.close()
        if getattr(self, "notify", None):
            self.notify.shutdown(socket.SHUT_RDWR)
            self.notify.close()
            self.notify = None
        return self.process.returncode if self.process else None


@pytest.fixture
def workdir():
    root = tempfile.mkdtemp(prefix="proctor-test-")
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def unmount(path):
    """Unmounts `path`, waiting briefly for a daemon that is still exiting to let go."""
    for _ in range(50):
        if subprocess.run(["umount", path], capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    subprocess.run(["umount", "-l", path], check=True)


@contextlib.contextmanager
def read_only_bind_mount(directory):
    """`directory` bind-mounted read-only over itself for the length of the block (needs root):
    what proctord meets on a read-only state directory."""
    subprocess.run(["mount", "--bind", directory, directory], check=True)
    try:
        # A bind mount takes `ro` only when remounted.
        subprocess.run(["mount", "-o", "remount,bind,ro", directory], check=True)
        yield
    finally:
        unmount(directory)


@contextlib.contextmanager
def running_daemon(workdir, *extra_args):
    """A started proctord with the base policy and `extra_args`, stopped when the block ends."""
    d = Daemon(workdir, extra_args=extra_args)
    write_policy(d.config_dir, base_policy())
    d.start()
    try:
        yield d
    finally:
        d.stop()


@pytest.fixture
def daemon(workdir):
    with running_daemon(workdir) as d:
        yield d


def proctorctl(daemon, *args, check=None):
    """Runs the real proctorctl against the daemon's admin socket."""
    # Options follow the command's words; --address may stand after the arguments.
    result = subprocess.run([os.path.join(BIN, "proctorctl"), *args, "--address", daemon.admin],
                            capture_output=True, text=True, timeout=30)
    if check is not None:
        assert result.returncode == check, (result.returncode, result.stdout, result.stderr)
    return result


def flood_denied_decides(daemon, count, app_id="io.proctor.test.notes"):
    """Registers `app_id` and pipelines `count` denied Decides (print) on one connection as
    fast as proctord reads them, a thread writing while this one counts the replies; returns
    the last reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(daemon.agent)
        registered = exchange(sock, "io.proctor.Agent.Register", {"appId": app_id})
        assert "error" not in registered, registered
        request = json.dumps({"method": "io.proctor.Agent.Decide",
                              "parameters": {"session": registered["parameters"]["session"], "action": "print"}})
        sender = threading.Thread(target=sock.sendall, args=((request.encode() + b"\0") * count,))
        sender.start()
        replies, last = 0, b""
        while replies < count:
            chunk = sock.recv(1 << 20)
            assert chunk, f"proctord closed the connection after {replies} replies"
            replies += chunk.count(b"\0")
            last = chunk
        sender.join()
        return json.loads(last.rstrip(b"\0").split(b"\0")[-1])


def raw_call(path, method, parameters=None, more=False, oneway=False, timeout=10):
    """A Varlink call with nothing but the standard library: independent of every client."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        return exchange(s, method, parameters, more=more, oneway=oneway)
