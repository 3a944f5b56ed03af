"""proctord's durable state through the real daemon: kill -9 while policies are applied,
wipes that survive a restart, rollback across a restart, the policy.d/bundle overlay, a
full or read-only state directory and a corrupt database."""
import glob
import pathlib
import re
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import threading
import time

import pytest

from conftest import Daemon, base_policy, flood_denied_decides, proctorctl, raw_call, read_only_bind_mount, unmount, write_policy

# The schema version this build writes: the number of steps in Schema.swift (each begins
# with a comment "// N: …"), so a new step does not need this file edited.
LATEST_SCHEMA = len(re.findall(r"^        // \d+: ", (pathlib.Path(__file__).resolve().parents[2] / "Sources" / "ProctorStore"
                                                      / "Schema.swift").read_text(), re.MULTILINE))


class VarlinkFailure(Exception):
    def __init__(self, reply):
        super().__init__(f"{reply['error']}: {reply.get('parameters')}")
        self.name = reply["error"]
        self.parameters = reply.get("parameters", {})


def call(path, method, parameters=None):
    """One call on a fresh connection; the reply's parameters, or VarlinkFailure."""
    reply = raw_call(path, method, parameters)
    if "error" in reply:
        raise VarlinkFailure(reply)
    return reply.get("parameters", {})


def admin(daemon, method, parameters=None):
    return call(daemon.admin, "io.proctor.Admin." + method, parameters)


def restart(daemon, sig=signal.SIGKILL):
    daemon.stop(sig)
    return daemon.start()


class Connection:
    """A persistent Varlink connection: a client that sends its next call as soon as the
    previous reply arrived."""

    def __init__(self, path, timeout=10):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.socket.settimeout(timeout)
        self.socket.connect(path)
        self.buffer = b""

    def call(self, method, parameters):
        self.socket.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
        while b"\0" not in self.buffer:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise ConnectionError("proctord closed the connection")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self):
        self.socket.close()


# MARK: Crash safety


def numbered_policy(number):
    """A policy whose every app carries `number`, so a policy mixed from two applies
    would show two numbers."""
    policy = base_policy(f"crash.{number}")
    for app in policy["apps"].values():
        app["config"] = {"apply": number, "filler": "x" * (number % 7) * 100}
    return policy


def test_policy_survives_kill_9_during_applies(workdir):
    """At least 50 SIGKILLs at random moments while one fast client applies numbered
    policies with compare-and-swap and another orders wipes. After each restart the policy
    in force is one whole applied version, history is consistent, and nothing
    acknowledged (apply or wipe) is lost."""
    history_limit = 8
    kills = 55
    rng = random.Random(int(os.environ.get("PROCTOR_CRASH_SEED", "5")))
    daemon = Daemon(workdir, extra_args=["--history-limit", str(history_limit)])
    write_policy(daemon.config_dir, base_policy("test.1"))
    sent = {}          # version -> (number, policy) for every apply ever sent
    acknowledged = {}  # version -> sha256 the daemon reported in its reply
    observed_sha = {}  # version -> sha256 seen in force after a restart
    wipes = set()      # directive ids acknowledged to the wiping client
    failures = []      # what went wrong in a client thread
    next_number = 0
    startup_kills = 0

    def until_killed(body):
        def run():
            try:
                connection = Connection(daemon.admin)
                while True:
                    body(connection)
            except (ConnectionError, OSError):
                pass  # the kill
            except Exception as error:  # an assertion in the thread fails the test
                failures.append(error)
        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def apply_next(connection):
        nonlocal next_number, expected
        next_number += 1
        policy = numbered_policy(next_number)
        sent[policy["version"]] = (next_number, policy)
        reply = connection.call("io.proctor.Admin.ApplyPolicy", {"policy": policy, "expectedVersion": expected})
        assert "error" not in reply, reply
        assert reply["parameters"]["version"] == policy["version"]
        acknowledged[policy["version"]] = reply["parameters"]["sha256"]
        expected = policy["version"]

    def wipe(connection):
        reply = connection.call("io.proctor.Admin.Wipe", {"appId": "io.proctor.test.notes"})
        assert "error" not in reply, reply
        wipes.add(reply["parameters"]["directiveId"])
        time.sleep(0.005)

    daemon.start()
    try:
        for _ in range(kills):
            expected = admin(daemon, "Status")["policy"]["version"]
            applies_before, wipes_before = len(acknowledged), len(wipes)
            clients = [until_killed(apply_next), until_killed(wipe)]
            # Each round gets an apply and a wipe acknowledged before the kill, however
            # slow the machine (a bounded wait, not a timing assertion); then a random delay.
            deadline = time.monotonic() + 30
            while (len(acknowledged) == applies_before or len(wipes) == wipes_before) and not failures:
                assert time.monotonic() < deadline, "no apply or no wipe acknowledged within 30 s"
                time.sleep(0.001)
            time.sleep(rng.uniform(0, 0.05))
            daemon.process.send_signal(signal.SIGKILL)
            daemon.process.wait()
            for client in clients:
                client.join(10)
                assert not client.is_alive()
            assert not failures, failures
            daemon.stop()
            if rng.random() < 0.3:
                # Also a kill while it starts: opening, checking and recovering the database.
                daemon.start(wait_ready=False)
                time.sleep(rng.uniform(0, 0.02))
                daemon.stop(signal.SIGKILL)
                startup_kills += 1
            daemon.start()
            check_state_after_crash(daemon, sent, acknowledged, observed_sha, history_limit)
            recorded = {w["id"] for w in admin(daemon, "GetApp", {"appId": "io.proctor.test.notes"})["app"]["wipes"]}
            assert wipes <= recorded, f"acknowledged wipes lost: {sorted(wipes - recorded)}"
        assert len(acknowledged) >= kills, "the client should get several applies through per round"
        assert len(wipes) >= kills and startup_kills > 0
    finally:
        daemon.stop()


def check_state_after_crash(daemon, sent, acknowledged, observed_sha, history_limit):
    status = admin(daemon, "Status")
    in_force = status["policy"]
    effective = admin(daemon, "GetPolicy")
    assert effective["info"] == in_force
    version = in_force["version"]
    if version == "test.1":
        assert not acknowledged, "an acknowledged apply was lost"
        return
    # Exactly one applied version, whole.
    assert version in sent, f"{version} was never applied"
    number, policy = sent[version]
    assert effective["policy"] == policy
    if version in acknowledged:
        assert in_force["sha256"] == acknowledged[version]
    assert observed_sha.setdefault(version, in_force["sha256"]) == in_force["sha256"]
    # Nothing acknowledged is older than what is in force.
    newest_acknowledged = max((sent[v][0] for v in acknowledged), default=0)
    assert number >= newest_acknowledged, f"{version} is in force, but crash.{newest_acknowledged} was acknowledged"

    entries = admin(daemon, "PolicyHistory")["entries"]
    assert 1 <= len(entries) <= history_limit
    assert entries[0]["current"] and not any(e["current"] for e in entries[1:])
    assert entries[0]["version"] == version
    assert all(e["kind"] == "apply" for e in entries)
    numbers = [sent[e["version"]][0] for e in entries]
    assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers), numbers
    times = [e["appliedAt"] for e in entries]
    assert times == sorted(times, reverse=True)
    kept = {e["version"] for e in entries}
    for acked in acknowledged:
        if acked not in kept:
            # Trimmed: only when the history is full of newer entries.
            assert len(entries) == history_limit and sent[acked][0] < numbers[-1], \
                f"acknowledged {acked} is missing from history {numbers}"


# MARK: Wipes and rollback across restarts


def test_wipe_issued_offline_survives_restart_and_is_delivered_once(daemon):
    wiped = admin(daemon, "Wipe", {"appId": "io.proctor.test.notes"})
    assert wiped["deliveredTo"] == 0
    directive = wiped["directiveId"]
    assert [w["state"] for w in admin(daemon, "GetApp", {"appId": "io.proctor.test.notes"})["app"]["wipes"]] == ["issued"]
    restart(daemon)
    agent = Connection(daemon.agent)
    reply = agent.call("io.proctor.Agent.Register", {"appId": "io.proctor.test.notes"})["parameters"]
    assert [d["id"] for d in reply["directives"]] == [directive]
    acknowledged = agent.call("io.proctor.Agent.AcknowledgeWipe", {"session": reply["session"], "directiveId": directive})
    assert "error" not in acknowledged, acknowledged
    again = agent.call("io.proctor.Agent.Register", {"appId": "io.proctor.test.notes"})["parameters"]
    assert again["directives"] == []
    agent.close()
    restart(daemon)
    agent = Connection(daemon.agent)
    assert agent.call("io.proctor.Agent.Register", {"appId": "io.proctor.test.notes"})["parameters"]["directives"] == []
    agent.close()
    wipes = admin(daemon, "GetApp", {"appId": "io.proctor.test.notes"})["app"]["wipes"]
    assert len(wipes) == 1
    assert wipes[0]["id"] == directive and wipes[0]["state"] == "completed"
    assert wipes[0]["deliveredAt"] <= wipes[0]["completedAt"]


def test_a_failed_wipe_logs_the_message_it_keeps_not_the_one_sent(daemon):
    """A failed wipe's message is kept as feedback cut to 1000 characters; its log line said the
    whole message sent (up to a message's MiB into the journal on every call)."""
    directive = admin(daemon, "Wipe", {"appId": "io.proctor.test.notes"})["directiveId"]
    agent = Connection(daemon.agent)
    session = agent.call("io.proctor.Agent.Register", {"appId": "io.proctor.test.notes"})["parameters"]["session"]
    sent = "disk full " + "x" * 200_000
    failed = agent.call("io.proctor.Agent.AcknowledgeWipe", {"session": session, "directiveId": directive,
                                                              "outcome": "failed", "message": sent})
    assert "error" not in failed, failed
    agent.close()
    [feedback] = admin(daemon, "GetApp", {"appId": "io.proctor.test.notes"})["app"]["feedback"]
    assert feedback["message"] == sent[:1000]
    line = next(line for line in daemon.wait_for_log("could not wipe its data").splitlines() if "could not wipe" in line)
    assert sent[:1000] in line and len(line) < 4096


def test_rollback_survives_restart(daemon):
    first = admin(daemon, "ApplyPolicy", {"policy": base_policy("v1"), "expectedVersion": "test.1"})
    changed = base_policy("v2")
    changed["apps"]["io.proctor.test.notes"]["config"] = {"syncDays": 2}
    admin(daemon, "ApplyPolicy", {"policy": changed, "expectedVersion": "v1"})
    assert admin(daemon, "RollbackPolicy", {"version": "v1"})["sha256"] == first["sha256"]
    restart(daemon)
    status = admin(daemon, "Status")["policy"]
    assert (status["version"], status["sha256"]) == ("v1", first["sha256"])
    assert admin(daemon, "GetPolicy")["policy"]["apps"]["io.proctor.test.notes"]["config"]["syncDays"] == 14
    history = admin(daemon, "PolicyHistory")["entries"]
    assert [(e["version"], e["kind"], e["current"]) for e in history] == [
        ("v1", "rollback", True), ("v2", "apply", False), ("v1", "apply", False)]
    # Compare-and-swap holds against the rolled-back version after the restart too.
    with pytest.raises(VarlinkFailure) as excinfo:
        admin(daemon, "ApplyPolicy", {"policy": base_policy("v3"), "expectedVersion": "v2"})
    assert excinfo.value.name == "io.proctor.Admin.VersionConflict"
    assert excinfo.value.parameters == {"expected": "v2", "current": "v1"}


def test_clean_stop_leaves_everything_in_state_db_alone(daemon):
    """After SIGTERM the database is one self-contained file, as an administrator copying
    state.db of a stopped daemon expects: nothing left behind in a -wal."""
    admin(daemon, "ApplyPolicy", {"policy": base_policy("kept.1")})
    directive = admin(daemon, "Wipe", {"appId": "io.proctor.test.notes"})["directiveId"]
    assert daemon.stop() == 0
    database = os.path.join(daemon.state_dir, "state.db")
    assert not os.path.exists(database + "-wal")
    copy = Daemon(os.path.join(daemon.root, "copy"))
    os.makedirs(copy.state_dir)
    write_policy(copy.config_dir, base_policy())
    with open(database, "rb") as source, open(os.path.join(copy.state_dir, "state.db"), "wb") as target:
        target.write(source.read())
    copy.start()
    try:
        assert admin(copy, "Status")["policy"]["version"] == "kept.1"
        assert [d["id"] for d in agent_still_serves(copy)["directives"]] == [directive]
    finally:
        copy.stop()


# MARK: The effective policy: policy.d overlaid by the applied bundle


def app_entry(config):
    return {"state": "authorized", "match": {"executable": "/usr/bin/true", "users": ["*"]}, "config": config}


def test_bundle_overlays_policy_directory(workdir):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, {
        "schema": 1, "version": "dir.1",
        "defaults": {"dlp": {"clipboard": {"level": "blocked", "charLimit": 10}, "print": "block"}},
        "apps": {"io.proctor.test.only-dir": app_entry({"from": "dir"}),
                 "io.proctor.test.both": app_entry({"from": "dir", "dirOnly": True})},
    })
    daemon.start()
    try:
        admin(daemon, "ApplyPolicy", {"policy": {
            "schema": 1, "version": "bundle.1",
            "defaults": {"dlp": {"clipboard": {"level": "any"}, "screenCapture": "block"}},
            "apps": {"io.proctor.test.both": app_entry({"from": "bundle"}),
                     "io.proctor.test.only-bundle": app_entry({"from": "bundle"})},
        }})

        def check():
            policy = admin(daemon, "GetPolicy")
            apps = policy["policy"]["apps"]
            assert policy["info"]["version"] == "bundle.1"
            assert policy["info"]["sources"] == ["policy.d/00-test.json", "applied bundle bundle.1"]
            assert apps["io.proctor.test.only-dir"]["config"] == {"from": "dir"}
            # The same app in both: the bundle's entry, whole (no key of the directory's survives).
            assert apps["io.proctor.test.both"]["config"] == {"from": "bundle"}
            assert apps["io.proctor.test.only-bundle"]["config"] == {"from": "bundle"}
            # Defaults merge setting by setting; the bundle wins where both say something.
            assert policy["policy"]["defaults"]["dlp"] == {
                "clipboard": {"level": "any", "charLimit": 10}, "print": "block", "screenCapture": "block"}
            print_rule = admin(daemon, "Decide", {"appId": "io.proctor.test.only-dir", "action": "print"})
            assert (print_rule["allowed"], print_rule["rule"]) == (False, "defaults.dlp.print")

        check()
        restart(daemon)
        check()
        # A reload of policy.d keeps the bundle on top of the new directory.
        write_policy(daemon.config_dir, {"schema": 1, "version": "dir.2",
                                         "apps": {"io.proctor.test.both": app_entry({"from": "dir.2"}),
                                                  "io.proctor.test.new": app_entry({})}}, name="10-more.json")
        assert admin(daemon, "Reload")["result"]["ok"] is True
        apps = admin(daemon, "GetPolicy")["policy"]["apps"]
        assert apps["io.proctor.test.both"]["config"] == {"from": "bundle"}
        assert "io.proctor.test.new" in apps and "io.proctor.test.only-dir" in apps
    finally:
        daemon.stop()


def test_applied_bundle_serves_alone_when_policy_directory_is_broken_at_start(daemon):
    applied = admin(daemon, "ApplyPolicy", {"policy": base_policy("bundle.only")})
    with open(os.path.join(daemon.config_dir, "policy.d", "00-test.json"), "w") as f:
        f.write('{"schema": 1, "apps": {"bad id": {}}}')
    restart(daemon)
    status = admin(daemon, "Status")
    assert (status["policy"]["version"], status["policy"]["sha256"]) == ("bundle.only", applied["sha256"])
    assert status["policy"]["sources"] == ["applied bundle bundle.only"]
    assert status["lastReload"]["ok"] is False
    assert agent_still_serves(daemon)["policyVersion"] == "bundle.only"


# MARK: Faults: full disk, read-only directory, corrupt database


@pytest.fixture
def small_state_mount(workdir):
    """The daemon's state directory on a 1 MiB tmpfs of its own."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    state = os.path.join(workdir, "state")
    os.makedirs(state)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "proctor-test-state", state], check=True)
    try:
        yield state
    finally:
        unmount(state)


def fill(directory):
    """Fills the file system of `directory`; returns the filler's path."""
    filler = os.path.join(directory, "filler")
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True)
    assert os.statvfs(directory).f_bavail == 0
    return filler


def agent_still_serves(daemon):
    agent = Connection(daemon.agent)
    try:
        reply = agent.call("io.proctor.Agent.Register", {"appId": "io.proctor.test.notes"})
        assert "error" not in reply, reply
        decision = agent.call("io.proctor.Agent.Decide", {"session": reply["parameters"]["session"], "action": "print"})
        assert decision["parameters"]["rule"] == 'apps["io.proctor.test.notes"].dlp.print'
        return reply["parameters"]
    finally:
        agent.close()


def expect_storage_failure(daemon, method, parameters, *words):
    with pytest.raises(VarlinkFailure) as excinfo:
        admin(daemon, method, parameters)
    assert excinfo.value.name == "io.proctor.Admin.StorageFailure"
    message = excinfo.value.parameters["message"]
    for word in words:
        assert word in message, message
    return message


def test_full_disk_fails_writes_clearly_and_keeps_serving(workdir, small_state_mount):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    daemon.start()
    try:
        admin(daemon, "ApplyPolicy", {"policy": base_policy("before-full")})
        directive = admin(daemon, "Wipe", {"appId": "io.proctor.test.notes"})["directiveId"]
        filler = fill(small_state_mount)
        database = os.path.join(small_state_mount, "state.db")
        big = base_policy("while-full")
        big["apps"]["io.proctor.test.notes"]["config"] = {"blob": "y" * 200_000}
        expect_storage_failure(daemon, "ApplyPolicy", {"policy": big}, "while-full", "no space", database)
        expect_storage_failure(daemon, "Wipe", {"appId": "io.proctor.test.notes"}, "no space", database)
        expected = "err State storage failed while applying policy while-full"
        assert expected in daemon.wait_for_log(expected), daemon.log()
        # Nothing changed, and apps are still answered.
        assert admin(daemon, "Status")["policy"]["version"] == "before-full"
        assert [e["version"] for e in admin(daemon, "PolicyHistory")["entries"]] == ["before-full"]
        assert agent_still_serves(daemon)["policyVersion"] == "before-full"
        # An acknowledgement that cannot be recorded is refused, so the wipe stays pending.
        agent = Connection(daemon.agent)
        session = agent.call("io.proctor.Agent.Register", {"appId": "io.proctor.test.notes"})["parameters"]
        assert [d["id"] for d in session["directives"]] == [directive]
        refused = agent.call("io.proctor.Agent.AcknowledgeWipe", {"session": session["session"], "directiveId": directive})
        assert refused["error"] == "io.proctor.Agent.StorageFailure" and "no space" in refused["parameters"]["message"]
        assert [d["id"] for d in agent.call("io.proctor.Agent.Register",
                                            {"appId": "io.proctor.test.notes"})["parameters"]["directives"]] == [directive]
        agent.close()
        assert daemon.process.poll() is None
        # Restarted on the full disk (a crash, the watchdog): it comes up with the applied
        # policy and serves; writes still fail clearly.
        restart(daemon)
        assert admin(daemon, "Status")["policy"]["version"] == "before-full"
        assert agent_still_serves(daemon)["policyVersion"] == "before-full"
        expect_storage_failure(daemon, "ApplyPolicy", {"policy": big}, "no space", database)
        os.unlink(filler)
        assert admin(daemon, "ApplyPolicy", {"policy": big})["version"] == "while-full"
        assert admin(daemon, "Wipe", {"appId": "io.proctor.test.notes"})["directiveId"]
        restart(daemon)
        assert admin(daemon, "Status")["policy"]["version"] == "while-full"
    finally:
        daemon.stop()


def test_events_a_full_disk_cannot_take_are_dropped_within_the_bound_and_counted(workdir, small_state_mount):
    """While the event history cannot be written, the queue keeps its bound (10 000 events)
    and drops the oldest: counted in Status (`eventsDropped`, `proctorctl metrics`) and
    logged, never silently."""
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    daemon.start()
    try:
        filler = fill(small_state_mount)
        count = 12_000
        flood_denied_decides(daemon, count)
        counts = admin(daemon, "Status")["counts"]
        # The registration's event and the decisions, less the 10 000 the queue keeps.
        assert counts["eventsDropped"] >= count + 1 - 10_000, counts
        assert counts["storageFailures"] >= 1, counts
        assert "events dropped from the event history in total" in daemon.wait_for_log("events dropped"), daemon.log()
        # The queue still holds its bound for `EventHistory` (and a later write).
        queued = admin(daemon, "EventHistory", {"filter": {"kinds": ["decision"]}, "limit": 10_000})["events"]
        assert len(queued) + counts["eventsDropped"] >= count and len(queued) <= 10_000, (len(queued), counts)
        metrics = proctorctl(daemon, "metrics", check=0).stdout
        assert f"proctor_events_dropped_total {counts['eventsDropped']}" in metrics, metrics
    finally:
        daemon.stop()


def test_read_only_state_directory_fails_writes_clearly(daemon):
    """A read-only bind mount over the state directory. The kernel refuses to make a file
    system read-only under files open for writing, and descriptors opened before a bind
    mount keep writing, so the daemon meets the read-only directory at its next start."""
    if os.geteuid() != 0:
        pytest.skip("bind mounts need root")
    applied = admin(daemon, "ApplyPolicy", {"policy": base_policy("before-ro")})
    daemon.stop(signal.SIGKILL)  # the last apply is then only in the WAL
    with read_only_bind_mount(daemon.state_dir):
        daemon.start()
        status = admin(daemon, "Status")["policy"]
        assert (status["version"], status["sha256"]) == ("before-ro", applied["sha256"])
        database = os.path.join(daemon.state_dir, "state.db")
        expect_storage_failure(daemon, "ApplyPolicy", {"policy": base_policy("while-ro")}, "while-ro", "read-only", database)
        expect_storage_failure(daemon, "Wipe", {"appId": "io.proctor.test.notes"}, "read-only", database)
        assert agent_still_serves(daemon)["policyVersion"] == "before-ro"
        assert [e["version"] for e in admin(daemon, "PolicyHistory")["entries"]] == ["before-ro"]
        daemon.stop()
    daemon.start()
    assert admin(daemon, "ApplyPolicy", {"policy": base_policy("after-ro")})["version"] == "after-ro"
    assert [e["version"] for e in admin(daemon, "PolicyHistory")["entries"]] == ["after-ro", "before-ro"]


@pytest.mark.parametrize("damage", ["garbage", "damaged-pages"])
def test_corrupt_database_is_moved_aside_and_replaced(workdir, damage):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    database = os.path.join(daemon.state_dir, "state.db")
    # What a wrapped data key looks like in state.db: 146 lower-case hex digits.
    key_lookalike = random.Random(8).randbytes(73).hex().encode()
    if damage == "garbage":
        os.makedirs(daemon.state_dir)
        garbage = bytearray(random.Random(7).randbytes(64 * 1024))
        garbage[5000:5000 + len(key_lookalike)] = key_lookalike
        with open(database, "wb") as f:
            f.write(garbage)
    else:
        daemon.start()
        for number in range(30):
            admin(daemon, "ApplyPolicy", {"policy": numbered_policy(number)})
        daemon.stop()  # a clean stop folds the WAL into state.db
        assert os.path.getsize(database) > 8192 and not os.path.exists(database + "-wal")
        with open(database, "r+b") as f:
            f.seek(4096)  # past the header page: the file still opens, its pages do not add up
            f.write(random.Random(7).randbytes(os.path.getsize(database) - 8192))
    with open(database, "rb") as f:
        damaged = f.read()
    daemon.start()
    try:
        kept = glob.glob(database + ".corrupt-*")
        kept_databases = [path for path in kept if not path.endswith(("-wal", "-shm"))]
        assert len(kept_databases) == 1, kept
        # Kept as it was, but for runs of 32 or more hex digits (a wrapped key's form), zeroed.
        hex_runs = re.compile(rb"[0-9a-f]{32,}")
        erased = hex_runs.sub(lambda run: b"0" * len(run.group()), damaged)
        with open(kept_databases[0], "rb") as f:
            kept_bytes = f.read()
        assert kept_bytes == erased and key_lookalike not in kept_bytes
        erased_runs = sum(1 for run in hex_runs.finditer(damaged) if run.group().strip(b"0"))
        assert erased_runs >= (1 if damage == "garbage" else 0)
        lines = [line for line in daemon.wait_for_log(kept_databases[0]).splitlines() if "corrupt" in line]
        assert any(line.split(" ", 1)[0] in ("emerg", "alert", "crit", "err") and kept_databases[0] in line
                   and f"ERASED_HEX_RUNS={erased_runs}" in line for line in lines), lines
        # A fresh database: the policy comes from policy.d, and writes work.
        assert admin(daemon, "Status")["policy"]["version"] == "test.1"
        assert admin(daemon, "PolicyHistory")["entries"] == []
        assert admin(daemon, "ApplyPolicy", {"policy": base_policy("fresh.1")})["version"] == "fresh.1"
        assert agent_still_serves(daemon)["policyVersion"] == "fresh.1"
        restart(daemon)
        assert admin(daemon, "Status")["policy"]["version"] == "fresh.1"
        assert glob.glob(database + ".corrupt-*") == kept
    finally:
        daemon.stop()


def test_read_only_state_directory_without_a_database_is_a_clear_start_up_error(workdir):
    if os.geteuid() != 0:
        pytest.skip("bind mounts need root")
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    os.makedirs(daemon.state_dir)
    with read_only_bind_mount(daemon.state_dir):
        try:
            daemon.start(wait_ready=False)
            assert daemon.process.wait(timeout=20) == 1
            database = os.path.join(daemon.state_dir, "state.db")
            assert f"cannot open the state database in {daemon.state_dir}: the state database {database} is read-only" \
                in daemon.log()
        finally:
            daemon.stop()


def test_read_only_state_directory_with_an_unreadable_wal_refuses_to_start(daemon):
    """A -wal without its -shm cannot be read in a read-only directory: rather than serve
    the older state in state.db, proctord stops and says why."""
    if os.geteuid() != 0:
        pytest.skip("bind mounts need root")
    admin(daemon, "ApplyPolicy", {"policy": base_policy("only-in-wal")})
    daemon.stop(signal.SIGKILL)
    database = os.path.join(daemon.state_dir, "state.db")
    os.unlink(database + "-shm")
    with read_only_bind_mount(daemon.state_dir):
        daemon.start(wait_ready=False)
        assert daemon.process.wait(timeout=20) == 1
        assert f"the directory is read-only and the write-ahead log {database}-wal cannot be read without its -shm file" \
            in daemon.log()
        daemon.stop()
    daemon.start()
    assert admin(daemon, "Status")["policy"]["version"] == "only-in-wal"


# MARK: Migration (the store's unit tests cover each step; this is the daemon on an old file)

SCHEMA_VERSION_1 = """
    CREATE TABLE bundles (id INTEGER PRIMARY KEY AUTOINCREMENT, version TEXT NOT NULL, sha256 TEXT NOT NULL,
                          json TEXT NOT NULL, applied_at INTEGER NOT NULL, applied_by INTEGER NOT NULL);
    CREATE TABLE wipes (id TEXT PRIMARY KEY, app_id TEXT NOT NULL, issued_at INTEGER NOT NULL,
                        issued_by INTEGER NOT NULL, delivered_at INTEGER, completed_at INTEGER);
    CREATE INDEX wipes_by_app ON wipes (app_id, issued_at);
    PRAGMA user_version = 1;
"""


def test_daemon_migrates_a_version_1_database_and_keeps_its_policy_and_wipes(workdir):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    os.makedirs(daemon.state_dir)
    database = os.path.join(daemon.state_dir, "state.db")
    old = base_policy("from-v1")
    with sqlite3.connect(database) as connection:
        connection.executescript(SCHEMA_VERSION_1)
        connection.execute("INSERT INTO bundles (version, sha256, json, applied_at, applied_by) VALUES (?, ?, ?, ?, 0)",
                           ("from-v1", "0" * 64, json.dumps(old), 1_700_000_000_000))
        connection.execute("INSERT INTO wipes (id, app_id, issued_at, issued_by) VALUES ('old-wipe', ?, 1700000000000, 0)",
                           ("io.proctor.test.notes",))
    daemon.start()
    try:
        assert admin(daemon, "Status")["policy"]["version"] == "from-v1"
        assert admin(daemon, "GetPolicy")["policy"] == old
        assert [(e["version"], e["kind"]) for e in admin(daemon, "PolicyHistory")["entries"]] == [("from-v1", "apply")]
        reply = agent_still_serves(daemon)
        assert [d["id"] for d in reply["directives"]] == ["old-wipe"]
        with sqlite3.connect(database) as connection:
            assert connection.execute("PRAGMA user_version").fetchone()[0] == LATEST_SCHEMA
    finally:
        daemon.stop()


def test_daemon_refuses_a_database_from_a_newer_build_and_leaves_it_alone(workdir):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    os.makedirs(daemon.state_dir)
    database = os.path.join(daemon.state_dir, "state.db")
    with sqlite3.connect(database) as connection:
        connection.executescript(SCHEMA_VERSION_1.replace("user_version = 1", "user_version = 99"))
        schema = connection.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall()
    daemon.start(wait_ready=False)
    assert daemon.process.wait(timeout=20) == 1
    assert f"schema version 99, newer than this build supports ({LATEST_SCHEMA})" in daemon.log()
    # Not migrated (proctord does switch the file to WAL before it reads the version, as
    # the newer build that wrote it would have anyway).
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 99
        assert connection.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall() == schema
    assert glob.glob(database + ".corrupt-*") == []
