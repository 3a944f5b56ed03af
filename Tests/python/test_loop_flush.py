"""No Agent-socket client can make proctord's loop wait on a disk flush (docs/state.md,
"Durability guarantees"): a registered app floods ReportFeedback (with policy
acknowledgements), re-registers, reports events and fails a wipe over and over, enough to fill
the write-ahead log many times over, while strace records every fsync, fdatasync and
sync_file_range of proctord by thread. The loop (the thread whose id is the process id) makes
none of them; the checkpoint thread makes them instead. Before the fix each of these calls was
an fsync on the loop, and SQLite's automatic checkpoint ran inside the loop's commits. And an
app registering a version that violates `onViolation: wipe` in a loop, once its key is gone,
makes the loop flush nothing either (each one was a `TRUNCATE` checkpoint)."""
import contextlib
import os
import re
import signal
import socket
import subprocess

import pytest

from conftest import Daemon, base_policy, proctorctl, running_daemon, this_executable, write_policy
from varlink_raw import exchange

FLUSH = re.compile(r"^(\d+)\s+(fsync|fdatasync|sync_file_range)\(")


def call(sock, method, parameters):
    reply = exchange(sock, method, parameters)
    assert "error" not in reply, (method, reply)
    return reply.get("parameters", {})


@contextlib.contextmanager
def flush_counter(daemon):
    """strace on every thread of proctord; yields a function returning its flushes so far
    by thread id, once strace is seen to follow the loop."""
    output = os.path.join(daemon.root, "flushes.strace")
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync,sync_file_range", "-e", "signal=none",
                               "-o", output, "-p", str(daemon.process.pid)])

    def flushes():
        counts = {}
        if not os.path.exists(output):  # strace has not opened it yet: nothing traced
            return counts
        with open(output) as lines:
            for line in lines:
                match = FLUSH.match(line)
                if match:
                    counts[int(match.group(1))] = counts.get(int(match.group(1)), 0) + 1
        return counts

    try:
        # An administrator's wipe is flushed on the loop before its reply: once one shows in
        # the trace, strace follows the loop (-qq says nothing on attaching).
        for _ in range(200):
            proctorctl(daemon, "wipe", "io.proctor.test.mail", check=0)
            if flushes().get(daemon.process.pid, 0) > 0:
                break
        else:
            raise AssertionError("strace never saw the loop's flush")
        yield flushes
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=30)


def flushed_during(flushes, pid, action):
    """(the loop's flushes, the other threads') while `action` runs."""
    before = flushes()
    action()
    after = flushes()
    loop = after.get(pid, 0) - before.get(pid, 0)
    others = sum(after.values()) - sum(before.values()) - loop
    return loop, others, after


def test_a_flood_of_client_writes_makes_the_loop_flush_nothing(workdir):
    with running_daemon(workdir) as daemon, flush_counter(daemon) as flushes:
        proctorctl(daemon, "wipe", "io.proctor.test.notes", check=0)  # a pending wipe, failed below
        delivered = []

        def flood():
            data = {"blob": "x" * 12000}
            for round_ in range(40):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(30)
                    sock.connect(daemon.agent)
                    registered = call(sock, "io.proctor.Agent.Register", {"appId": "io.proctor.test.notes", "version": "1.0"})
                    session = registered["session"]
                    delivered.extend(directive["id"] for directive in registered.get("directives") or [])
                    for i in range(60):
                        call(sock, "io.proctor.Agent.ReportFeedback",
                             {"session": session, "key": f"key{i % 90}", "severity": "info", "message": f"round {round_}",
                              "data": data})
                    call(sock, "io.proctor.Agent.ReportFeedback",
                         {"session": session, "key": "policy", "severity": "info", "message": "applied",
                          "data": {"version": f"v{round_}", "result": "applied"}})
                    call(sock, "io.proctor.Agent.ReportEvent", {"session": session, "event": "didBecomeActive"})
                    if delivered:
                        call(sock, "io.proctor.Agent.AcknowledgeWipe",
                             {"session": session, "directiveId": delivered[0], "outcome": "failed", "message": "busy"})

        loop, others, after = flushed_during(flushes, daemon.process.pid, flood)
        assert delivered, "the pending wipe was never delivered"
        assert loop == 0, f"the loop flushed {loop} times during the flood ({after})"
        # ≈ 2600 writes of ≈ 12 KB: the log passes its 1000 pages several times, and each
        # checkpoint fsyncs the log and the database on the checkpoint thread.
        assert others >= 4, f"the checkpoint thread flushed only {others} times ({after})"
        # Everything written is there (the last round's feedback, acknowledgement, failure).
        app = proctorctl(daemon, "app", "io.proctor.test.notes", "--json", check=0).stdout
        assert '"round 39"' in app and '"v39"' in app and '"busy"' in app


def test_registering_a_violating_version_in_a_loop_makes_the_loop_flush_nothing(workdir):
    """Under `onViolation: wipe`, each registration of a version below `minVersion` shreds the
    key of its user. Once the key is destroyed and erased there is nothing left to shred: the
    registrations after that make no checkpoint (before: a `TRUNCATE` checkpoint, with its
    fsyncs, on the loop at each one)."""
    notes = {"state": "authorized", "match": {"executable": this_executable(), "users": ["*"]},
             "compliance": {"minVersion": "2.0.0", "onViolation": "wipe"}}
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy(**{"io.proctor.test.notes": notes}))
    daemon.start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(daemon.agent)
            session = call(sock, "io.proctor.Agent.Register", {"appId": "io.proctor.test.notes", "version": "2.1.0"})["session"]
            assert call(sock, "io.proctor.Agent.GetDataKey", {"session": session})["generation"] == 1

        def register_violating(times):
            for _ in range(times):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(30)
                    sock.connect(daemon.agent)
                    call(sock, "io.proctor.Agent.Register", {"appId": "io.proctor.test.notes", "version": "1.0.0"})

        register_violating(1)  # destroys the key, flushed, and erases it
        assert "compliance violation of version 1.0.0" in daemon.wait_for_log("Destroyed 1 data key(s)")
        with flush_counter(daemon) as flushes:
            loop, _, after = flushed_during(flushes, daemon.process.pid, lambda: register_violating(100))
        assert loop == 0, f"the loop flushed {loop} times for 100 violating registrations ({after})"
    finally:
        daemon.stop()
