"""Attacks on proctord's transport and logging, each run against the real binary
(issue 11: never hang, never lie, no single user starves the rest)."""
import fcntl
import os
import signal
import socket
import subprocess
import time

from conftest import Daemon, base_policy, raw_call, write_policy
from varlink_raw import exchange

F_SETPIPE_SZ = 1031


def wait_until_serving(d, process, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "proctord exited during start-up"
        try:
            return raw_call(d.admin, "io.proctor.Admin.Status", timeout=2)["parameters"]
        except OSError:
            time.sleep(0.05)
    raise AssertionError("proctord did not start serving")


def test_sigterm_ends_proctord_whose_stderr_nobody_reads(workdir):
    """Regression: with stderr a full pipe, the shutdown flush waited forever."""
    d = Daemon(workdir)
    write_policy(d.config_dir, base_policy())
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)  # the smallest pipe: a few dozen lines fill it
    process = subprocess.Popen(d.command(), stdout=subprocess.DEVNULL, stderr=write_end)
    os.close(write_end)
    try:
        wait_until_serving(d, process)
        # Every reload logs a line; far more than the pipe holds, and nobody reads it.
        for _ in range(200):
            process.send_signal(signal.SIGHUP)
            time.sleep(0.005)
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        # The flush gives up after 2 s; allow for a slow, shared machine.
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(read_end)


def test_journal_failures_are_counted_and_said_once_on_stderr(workdir):
    """With --log-target journal and no journald, every line was lost silently."""
    d = Daemon(workdir, extra_args=["--log-target", "journal"])
    write_policy(d.config_dir, base_policy())
    # A private mount namespace with an empty /run/systemd/journal: no journald, whatever
    # the host runs.
    script = ('mkdir -p /run/systemd/journal && mount -t tmpfs tmpfs /run/systemd/journal '
              '&& exec "$@"')
    stderr_path = os.path.join(workdir, "stderr")
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                    "sh"] + d.command(),
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        status = wait_until_serving(d, process)
        for _ in range(3):
            process.send_signal(signal.SIGHUP)  # each reload logs one more line
            time.sleep(0.05)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            status = raw_call(d.admin, "io.proctor.Admin.Status")["parameters"]
            if status["counts"]["logSinkFailures"] >= 4:
                break
            time.sleep(0.05)
        assert status["counts"]["logSinkFailures"] >= 4, status["counts"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
        with open(stderr_path, "rb") as f:
            lines = f.read().decode().splitlines()
        said = [line for line in lines if "cannot log to the journal" in line]
        assert len(said) == 1, lines
        assert "logSinkFailures" in said[0]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


HOLD_CONNECTIONS = """
import json, socket, sys
held, served = [], 0
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sys.argv[1])
    try:
        s.sendall(json.dumps({"method": "org.varlink.service.GetInfo"}).encode() + b"\\0")
        served += s.recv(65536).endswith(b"\\0")
    except OSError:
        pass
    held.append(s)
print(served, flush=True)
sys.stdin.read()  # hold the connections until the test closes stdin
"""

REGISTER = f"""
import socket, sys
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
from varlink_raw import exchange
with socket.socket(socket.AF_UNIX) as s:
    s.settimeout(5)
    s.connect(sys.argv[1])
    reply = exchange(s, "io.proctor.Agent.Register", {{"appId": "io.proctor.test.notes", "version": "1.0"}})
print(reply.get("parameters", {{}}).get("state") or reply)
"""


def as_user(uid, script, *args, **kwargs):
    return subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                             "/usr/bin/python3", "-c", script, *args],
                            stdout=subprocess.PIPE, text=True, **kwargs)


def test_one_user_at_its_connection_limit_leaves_room_for_another(workdir):
    """Issue 11: one uid holding every Agent connection made every real app's Register fail."""
    d = Daemon(workdir, extra_args=["--max-connections", "8", "--max-connections-per-uid", "3",
                                    "--reserved-connections", "2"])
    write_policy(d.config_dir, base_policy())
    d.start()
    holder = as_user(65534, HOLD_CONNECTIONS, d.agent, "5", stdin=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "3"  # the 4th and 5th are refused
        assert "the user holds the most connections" in d.wait_for_log("the user holds the most connections")
        registered = as_user(1, REGISTER, d.agent)
        assert registered.communicate(timeout=30)[0].strip() == "authorized"
        # Root (and the admin group) are exempt and keep the reserve.
        assert raw_call(d.agent, "org.varlink.service.GetInfo")["parameters"]["product"] == "proctord"
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
        d.stop()


def test_an_agent_connection_that_never_registers_is_closed(workdir):
    d = Daemon(workdir, extra_args=["--register-timeout", "1"])
    write_policy(d.config_dir, base_policy())
    d.start()
    try:
        with socket.socket(socket.AF_UNIX) as idle, socket.socket(socket.AF_UNIX) as app:
            idle.connect(d.agent)
            app.connect(d.agent)
            app.settimeout(10)
            registered = exchange(app, "io.proctor.Agent.Register", {"appId": "io.proctor.test.notes"})
            idle.settimeout(10)
            assert idle.recv(1) == b""  # closed by proctord after the register timeout
            time.sleep(0.5)
            decided = exchange(app, "io.proctor.Agent.Decide",
                               {"session": registered["parameters"]["session"], "action": "print"})
            assert decided["parameters"]["allowed"] is False, "the registered app must still be served"
    finally:
        d.stop()
