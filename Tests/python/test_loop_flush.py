"""No Agent-socket client can make proctord's loop wait on a disk flush (docs/state.md,
"Durability guarantees"): a registered app floods ReportFeedback (with policy
acknowledgements), re-registers, reports events and fails a wipe over and over, enough to fill
the write-ahead log many times over, while strace records every fsync, fdatasync and
sync_file_range of proctord by thread. The loop (the thread whose id is the process id) makes
none of them; the checkpoint thread makes them instead. Before the fix each of these calls was
an fsync on the loop, and SQLite's automatic checkpoint ran inside the loop's commits."""
import os
import re
import shutil
import signal
import socket
import subprocess

import pytest

from conftest import base_policy, proctorctl, running_daemon, write_policy
from varlink_raw import exchange

FLUSH = re.compile(r"^(\d+)\s+(fsync|fdatasync|sync_file_range)\(")


def call(sock, method, parameters):
    reply = exchange(sock, method, parameters)
    assert "error" not in reply, (method, reply)
    return reply.get("parameters", {})


def start_strace(pid, output):
    """strace on every thread of `pid`, returning once it is attached to all of them."""
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync,sync_file_range", "-e", "signal=none",
                               "-o", output, "-p", str(pid)], stderr=subprocess.PIPE, text=True)
    # With -qq nothing is said on attaching: a flush of the loop's own, asked for below, shows it is.
    return tracer


def flushes_by_thread(output):
    counts = {}
    with open(output) as lines:
        for line in lines:
            match = FLUSH.match(line)
            if match:
                counts[int(match.group(1))] = counts.get(int(match.group(1)), 0) + 1
    return counts


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (Debian package strace)")
def test_a_flood_of_client_writes_makes_the_loop_flush_nothing(workdir):
    with running_daemon(workdir) as daemon:
        pid = daemon.process.pid
        output = os.path.join(workdir, "flushes.strace")
        tracer = start_strace(pid, output)
        try:
            # An administrator's wipe is flushed on the loop before its reply: once it shows in
            # the trace, strace follows the loop. (It also leaves a pending wipe to fail below.)
            deadline_rounds = 0
            while True:
                wipe = proctorctl(daemon, "wipe", "io.proctor.test.notes", "--json", check=0)
                if flushes_by_thread(output).get(pid, 0) > 0:
                    break
                deadline_rounds += 1
                assert deadline_rounds < 200 and tracer.poll() is None, "strace never saw the loop's flush"
            before = flushes_by_thread(output)
            directive = None
            data = {"blob": "x" * 12000}
            for round_ in range(40):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(30)
                    sock.connect(daemon.agent)
                    registered = call(sock, "io.proctor.Agent.Register", {"appId": "io.proctor.test.notes", "version": "1.0"})
                    session = registered["session"]
                    directive = directive or next(iter(registered.get("directives") or []), {}).get("id")
                    for i in range(60):
                        call(sock, "io.proctor.Agent.ReportFeedback",
                             {"session": session, "key": f"key{i % 90}", "severity": "info", "message": f"round {round_}",
                              "data": data})
                    call(sock, "io.proctor.Agent.ReportFeedback",
                         {"session": session, "key": "policy", "severity": "info", "message": "applied",
                          "data": {"version": f"v{round_}", "result": "applied"}})
                    call(sock, "io.proctor.Agent.ReportEvent", {"session": session, "event": "didBecomeActive"})
                    if directive:
                        call(sock, "io.proctor.Agent.AcknowledgeWipe",
                             {"session": session, "directiveId": directive, "outcome": "failed", "message": "busy"})
            after = flushes_by_thread(output)
        finally:
            tracer.send_signal(signal.SIGINT)
            tracer.wait(timeout=30)
        loop = after.get(pid, 0) - before.get(pid, 0)
        others = sum(count for thread, count in after.items() if thread != pid) - \
            sum(count for thread, count in before.items() if thread != pid)
        assert directive, "the pending wipe was never delivered"
        assert loop == 0, f"the loop flushed {loop} times during the flood ({after})"
        # ≈ 2400 writes of ≈ 12 KB: the log passes its 1000 pages several times, and each
        # checkpoint fsyncs the log and the database on the checkpoint thread.
        assert others >= 4, f"the checkpoint thread flushed only {others} times ({after})"
        # Everything written is there (the last round's feedback, acknowledgement, failure).
        app = proctorctl(daemon, "app", "io.proctor.test.notes", "--json", check=0).stdout
        assert '"round 39"' in app and '"v39"' in app and '"busy"' in app
