"""Attacks on proctord's transport and logging, each run against the real binary
(issue 11: never hang, never lie, no single user starves the rest)."""
import fcntl
import json
import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import Daemon, base_policy, raw_call, running_daemon, write_policy
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
    with running_daemon(workdir, "--register-timeout", "1") as d:
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


# Sends COUNT Register calls on one connection without waiting, then reads every reply:
# argv SOCKET COUNT. Prints how many were refused.
REGISTER_FLOOD = """
import json, socket, sys
count = int(sys.argv[2])
calls = b"".join(json.dumps({"method": "io.proctor.Agent.Register",
                             "parameters": {"appId": ("io.proctor.test.absent" if i % 2 else "io.proctor.test.other-exe")}}
                            ).encode() + b"\\0" for i in range(count))
with socket.socket(socket.AF_UNIX) as s:
    s.settimeout(30)
    s.connect(sys.argv[1])
    s.sendall(calls)
    data = b""
    while data.count(b"\\0") < count:
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        data += chunk
print(sum(b'"error"' in reply for reply in data.split(b"\\0")), flush=True)
"""


def test_a_flood_of_refused_registrations_is_logged_in_bounded_lines(workdir):
    """Issue 11: every refused Register was logged, 40 000 lines in 1.5 s from one user."""
    d = Daemon(workdir)
    write_policy(d.config_dir, base_policy())
    d.start()
    try:
        flood = as_user(65534, REGISTER_FLOOD, d.agent, "2000")
        assert flood.communicate(timeout=60)[0].strip() == "2000"
        # Another user's refusal is still logged, at once.
        assert raw_call(d.agent, "io.proctor.Agent.Register", {"appId": "io.proctor.test.rootprobe"})["error"] \
            == "io.proctor.Agent.UnknownApp"
        log = d.wait_for_log("io.proctor.test.rootprobe is not in policy")
        assert "Registration refused: io.proctor.test.rootprobe is not in policy" in log
        # The flood stopped: what it suppressed is reported once its window ends (10 s).
        log = d.wait_for_log("more refusals for uid 65534 suppressed", timeout=30)
        lines = log.splitlines()
        logged = [line for line in lines if line.startswith("warning Registration refused") and "PEER_UID=65534" in line]
        suppressed = [int(line.split("SUPPRESSED=")[1].split()[0]) for line in lines
                      if "more refusals for uid 65534 suppressed (registrations)" in line]
        assert 1 <= len(logged) <= 20, len(logged)
        assert len(logged) + sum(suppressed) == 2000, (len(logged), suppressed)
    finally:
        d.stop()


def large_policy(version, print_rule, apps=10_000):
    """base_policy plus `apps` generated apps; the notes app's print rule is `print_rule`."""
    policy = base_policy(version=version)
    policy["apps"]["io.proctor.test.notes"]["dlp"]["print"] = print_rule
    for index in range(apps):
        policy["apps"][f"io.proctor.generated.app{index:06d}"] = {
            "state": "authorized", "match": {"executable": "/usr/bin/true", "users": ["*"]},
            "config": {"index": index}}
    return policy


def wait_for_notification(d, text, after=0, timeout=60):
    """The index of the first notification past `after` holding the line `text`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for index, message in enumerate(list(d.notifications)[after:], start=after):
            if text in message.split("\n"):
                return index
        time.sleep(0.005)
    raise AssertionError(f"no {text} after notification {after}: {d.notifications}")


def test_a_large_reload_does_not_stop_the_agent_socket(workdir):
    """Issue 11: reloading a 100 000-app policy stalled every client for seconds. policy.d is
    read and compiled off the event loop; the old policy answers until the new one is in."""
    d = Daemon(workdir)
    write_policy(d.config_dir, large_policy("big.1", "block"))
    d.start(timeout=120)
    app = socket.socket(socket.AF_UNIX)
    admins = [socket.socket(socket.AF_UNIX) for _ in range(3)]
    try:
        app.settimeout(30)
        app.connect(d.agent)
        session = exchange(app, "io.proctor.Agent.Register", {"appId": "io.proctor.test.notes"})["parameters"]["session"]

        def may_print():
            return exchange(app, "io.proctor.Agent.Decide", {"session": session, "action": "print"})["parameters"]["allowed"]

        assert may_print() is False
        write_policy(d.config_dir, large_policy("big.2", "allow"))
        seen = len(d.notifications)
        for admin in admins:
            admin.connect(d.admin)
        admins[0].sendall(b'{"method":"io.proctor.Admin.Reload"}\0')
        reloading = wait_for_notification(d, "RELOADING=1", after=seen)
        # The reload has begun: the app is answered now, by the old policy, before the reload ends.
        assert may_print() is False
        admins[0].setblocking(False)
        with pytest.raises(BlockingIOError):
            admins[0].recv(1)  # no Reload reply yet
        # Two more reloads while one is in flight are coalesced into one more.
        for admin in admins[1:]:
            admin.sendall(b'{"method":"io.proctor.Admin.Reload"}\0')
        replies = []
        for admin in admins:
            admin.setblocking(True)
            admin.settimeout(120)
            data = b""
            while not data.endswith(b"\0"):
                data += admin.recv(65536)
            replies.append(json.loads(data[:-1])["parameters"])
        assert [reply["policy"]["version"] for reply in replies] == ["big.2"] * 3
        assert all(reply["result"]["ok"] for reply in replies)
        ready = wait_for_notification(d, "READY=1", after=reloading)
        assert ready > reloading
        # Then the new policy is in force.
        assert may_print() is True

        # A pushed bundle is compiled off the loop too (over the 10 000 apps of policy.d).
        # With proctord stopped, an ApplyPolicy is queued, then a Decide: it is answered with
        # the policy in force before the ApplyPolicy is.
        bundle = base_policy(version="pushed.1")  # the notes app may not print
        d.process.send_signal(signal.SIGSTOP)
        try:
            admins[0].sendall(json.dumps({"method": "io.proctor.Admin.ApplyPolicy",
                                          "parameters": {"policy": bundle}}).encode() + b"\0")
            app.sendall(json.dumps({"method": "io.proctor.Agent.Decide",
                                    "parameters": {"session": session, "action": "print"}}).encode() + b"\0")
        finally:
            d.process.send_signal(signal.SIGCONT)
        data = b""
        while not data.endswith(b"\0"):
            data += app.recv(65536)
        assert json.loads(data[:-1])["parameters"]["allowed"] is True
        admins[0].setblocking(False)
        with pytest.raises(BlockingIOError):
            admins[0].recv(1)  # no ApplyPolicy reply yet
        admins[0].setblocking(True)
        data = b""
        while not data.endswith(b"\0"):
            data += admins[0].recv(65536)
        assert json.loads(data[:-1])["parameters"]["version"] == "pushed.1"
        assert may_print() is False
        time.sleep(0.2)  # any third RELOADING=1 would have been sent by now
        starts = [m for m in list(d.notifications)[seen:] if "RELOADING=1" in m.split("\n")]
        assert 1 <= len(starts) <= 2, starts
    finally:
        app.close()
        for admin in admins:
            admin.close()
        d.stop()


# Sends one Register with an app id that cannot be in any policy: argv SOCKET; prints the reply.
REGISTER_MALFORMED = """
import json, socket, sys
sys.path.insert(0, sys.argv[2])
from varlink_raw import exchange
app_ids = ["io.proctor." + "a" * 900_000, "io.proctor.test.notes\\u0000", "notes"]
with socket.socket(socket.AF_UNIX) as s:
    s.settimeout(30)
    s.connect(sys.argv[1])
    print(json.dumps([exchange(s, "io.proctor.Agent.Register", {"appId": app_id}) for app_id in app_ids]), flush=True)
"""


def test_an_app_id_no_policy_can_hold_is_refused_unlogged_and_unrecorded(workdir):
    """Any user may call Register: an unknown app id was logged (twice a line) and kept in the
    event history whatever its size, so a user could write a MiB a second per uid to the
    journal and the state database. An id that is not an app id at all is an InvalidParameter."""
    d = Daemon(workdir)
    write_policy(d.config_dir, base_policy())
    d.start()
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        replies = json.loads(as_user(65534, REGISTER_MALFORMED, d.agent, here).communicate(timeout=60)[0])
        for reply in replies:
            assert reply["error"] == "io.proctor.Agent.InvalidParameter", reply["error"]
            assert reply["parameters"]["parameter"] == "appId"
            assert "253 bytes" in reply["parameters"]["reason"]
        # A well-formed unknown id is still refused as unknown, logged and recorded.
        assert raw_call(d.agent, "io.proctor.Agent.Register", {"appId": "io.proctor.test.rootprobe"})["error"] \
            == "io.proctor.Agent.UnknownApp"
        log = d.wait_for_log("io.proctor.test.rootprobe is not in policy")
        assert "aaaaaaaa" not in log and "PEER_UID=65534" not in log
        events = raw_call(d.admin, "io.proctor.Admin.EventHistory", {})["parameters"]["events"]
        assert [event["appId"] for event in events if event["kind"] == "registration"] == ["io.proctor.test.rootprobe"]
    finally:
        d.stop()


def test_a_register_version_past_the_stores_limit_is_refused_before_it_is_kept(daemon):
    """The store keeps at most 100 characters of an app's version: a longer one (up to a
    message's MiB) was kept with the session and in the history's registration event, and its
    refused store write logged as a storage failure. It is an InvalidParameter now."""
    long_version = "1." + "9" * 900_000
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(daemon.agent)
        reply = exchange(sock, "io.proctor.Agent.Register", {"appId": "io.proctor.test.notes", "version": long_version})
        assert reply.get("error") == "io.proctor.Agent.InvalidParameter", str(reply)[:200]
        assert reply["parameters"]["parameter"] == "version"
        assert "at most 100 characters" in reply["parameters"]["reason"]
        accepted = exchange(sock, "io.proctor.Agent.Register", {"appId": "io.proctor.test.notes", "version": "1." + "9" * 98})
        assert "error" not in accepted, accepted
    events = raw_call(daemon.admin, "io.proctor.Admin.EventHistory", {})["parameters"]["events"]
    assert [len(event["data"]["version"]) for event in events if event["kind"] == "registration"] == [100]
    assert "State storage failed" not in daemon.log()


def test_a_key_repeated_in_another_unicode_form_gets_an_error_reply(daemon):
    """ValidatePolicy with an app's `config` holding "café" twice, composed (U+00E9) and
    decomposed (e U+0301): one dictionary cannot keep both, so the call is answered
    InvalidParameter naming `policy`, as an exact repeat is, and its connection closed; proctord
    serves on."""
    policy = ('{"schema":1,"version":"u.1","apps":{"a.b":{"state":"allowed","config":'
              '{"caf\u00e9":1,"cafe\u0301":2}}}}')
    for repeated in (policy, policy.replace("cafe\u0301", "caf\u00e9")):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(daemon.admin)
            s.sendall(('{"method":"io.proctor.Admin.ValidatePolicy","parameters":{"policy":%s}}' % repeated)
                      .encode() + b"\0")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        assert json.loads(data.rstrip(b"\0")) == {"error": "org.varlink.service.InvalidParameter",
                                                  "parameters": {"parameter": "policy"}}
    assert raw_call(daemon.admin, "io.proctor.Admin.Status")["parameters"]["policy"]["version"]
