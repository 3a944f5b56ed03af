"""The event history through the real proctorctl and proctord: -n, --since/--until (absolute
and relative), --app, --kind, --json, --follow (history, then live, no gap or duplicate),
a restart (the history survives), retention pruning, and a report's own time."""
import json
import os
import socket
import sqlite3
import subprocess
import time
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

from conftest import BIN, Daemon, base_policy, flood_denied_decides, proctorctl, raw_call, write_policy
from varlink_raw import exchange


@contextmanager
def session(daemon, app_id="io.proctor.test.notes"):
    """A registered Agent session on a connection of its own: (socket, session id)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(daemon.agent)
        reply = exchange(sock, "io.proctor.Agent.Register", {"appId": app_id})
        assert "error" not in reply, reply
        yield sock, reply["parameters"]["session"]


def report(sock, session_id, event, **extra):
    reply = exchange(sock, "io.proctor.Agent.ReportEvent", {"session": session_id, "event": event, **extra})
    assert "error" not in reply, reply


def events_json(daemon, *args):
    out = proctorctl(daemon, "events", "--json", *args, check=0).stdout
    return [json.loads(line) for line in out.splitlines()]


def wait_for_written(daemon, event_id, timeout=10):
    """Polls state.db (WAL: readable while proctord writes) until the batched write has
    stored the event `event_id` (and pruned with it)."""
    deadline = time.monotonic() + timeout
    while True:
        with sqlite3.connect(os.path.join(daemon.state_dir, "state.db")) as db:
            stored = db.execute("SELECT max(id) FROM events").fetchone()[0] or 0
        if stored >= event_id or time.monotonic() > deadline:
            assert stored >= event_id, f"event {event_id} not written, only up to {stored}"
            return
        time.sleep(0.02)


def rfc3339(moment):
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_history_queries(daemon):
    with session(daemon) as (sock, sid):
        report(sock, sid, "didBecomeActive")
        exchange(sock, "io.proctor.Agent.Decide", {"session": sid, "action": "print"})
        report(sock, sid, "dataActionDenied", detail={"action": "clipboard.copy", "target": "org.example.browser"})
        report(sock, sid, "willResignActive")
    with session(daemon, "io.proctor.test.blocked"):
        pass

    everything = events_json(daemon)
    kinds = [(e["kind"], e.get("appId")) for e in everything]
    assert kinds == [("registration", "io.proctor.test.notes"), ("lifecycle", "io.proctor.test.notes"),
                     ("decision", "io.proctor.test.notes"), ("denial", "io.proctor.test.notes"),
                     ("lifecycle", "io.proctor.test.notes"), ("registration", "io.proctor.test.blocked"),
                     # The blocked app's launch verdict, a denied decision (allowed ones are not kept).
                     ("decision", "io.proctor.test.blocked")]
    ids = [e["id"] for e in everything]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert everything[0]["data"]["outcome"] == "registered"
    # A blocked app gets its session but may not run: a refused launch, not "registered".
    assert everything[-2]["data"]["outcome"] == "launchRefused" and everything[-2]["data"]["state"] == "blocked"
    assert everything[-1]["data"]["allowed"] is False and everything[-1]["data"]["action"] == "launch"
    assert everything[3]["data"]["detail"] == {"action": "clipboard.copy", "target": "org.example.browser"}
    for event in everything:
        assert event["at"] == event["receivedAt"]

    # -n: the newest N at once; the readable form is one line per event.
    assert [e["id"] for e in events_json(daemon, "-n", "2")] == ids[-2:]
    lines = proctorctl(daemon, "events", "--lines", "4", check=0).stdout.splitlines()
    assert len(lines) == 4 and "  denial  io.proctor.test.notes  " in lines[0]
    # --app, --kind (repeated and comma-separated), --output json.
    assert [e["kind"] for e in events_json(daemon, "--app", "io.proctor.test.blocked")] == ["registration", "decision"]
    assert [e["kind"] for e in events_json(daemon, "--kind", "denial,decision")] == ["decision", "denial", "decision"]
    out = proctorctl(daemon, "events", "--output", "json", "--kind", "lifecycle", "--kind", "registration",
                     "--app", "io.proctor.test.notes", check=0).stdout
    assert [json.loads(line)["kind"] for line in out.splitlines()] == ["registration", "lifecycle", "lifecycle"]

    # --since/--until: relative and absolute, RFC 3339 and local.
    assert len(events_json(daemon, "--since", "-1h")) == 7
    assert events_json(daemon, "--until", "-1h") == []
    assert events_json(daemon, "--since", "+1h") == []
    middle = everything[2]["occurredAt"]
    assert [e["id"] for e in events_json(daemon, "--since", middle)] == [e["id"] for e in everything
                                                                          if e["occurredAt"] >= middle]
    assert [e["id"] for e in events_json(daemon, "--until", middle)] == [e["id"] for e in everything
                                                                          if e["occurredAt"] < middle]
    today = datetime.now().strftime("%Y-%m-%d")
    assert len(events_json(daemon, "--since", today + " 00:00")) == 7
    assert len(events_json(daemon, "--since", "today", "--until", "tomorrow")) == 7
    assert events_json(daemon, "--until", "yesterday") == []
    bad = proctorctl(daemon, "events", "--since", "soon")
    assert bad.returncode == 2 and "--since expects a time" in bad.stderr


def test_a_denied_decide_keeps_at_most_4096_bytes_of_its_target_in_the_log_and_history(daemon):
    """A target is the app's to choose, up to a message's size (1 MiB): kept whole, a flood of
    denials with such targets held up to 4096 of them in the log queue and 100 000 in the
    history (100 GB of state.db), as a ReportEvent's detail (4096 bytes) never could."""
    long_path = "/tmp/" + "\u00e9" * 150_000  # 300 KB of two-byte characters (escaped: 900 KB), cut between two
    with session(daemon) as (sock, sid):
        reply = exchange(sock, "io.proctor.Agent.Decide", {"session": sid, "action": "file.export", "target": long_path})
        assert reply["parameters"]["rule"] == "builtin.fileExport.pathTooLong", reply
        exchange(sock, "io.proctor.Agent.Decide", {"session": sid, "action": "print", "target": "/tmp/" + "x" * 4091})
    [denied, _] = events_json(daemon, "--kind", "decision")[-2:]
    target = denied["data"]["target"]
    kept = long_path.encode()[:4095].decode(errors="ignore")  # whole characters only
    assert target == kept + f"\u2026 ({len(long_path.encode())} bytes)", target[-40:]
    assert events_json(daemon, "--kind", "decision")[-1]["data"]["target"] == "/tmp/" + "x" * 4091, "4096 bytes are kept whole"
    line = next(line for line in daemon.wait_for_log("Denied file.export").splitlines() if "Denied file.export" in line)
    assert len(line) < 8192 and f"({len(long_path.encode())} bytes)" in line


def test_a_report_keeps_the_time_it_occurred(daemon):
    earlier = datetime.now(timezone.utc) - timedelta(minutes=5)
    with session(daemon) as (sock, sid):
        report(sock, sid, "didEnterBackground", occurredAt=rfc3339(earlier))
        reply = exchange(sock, "io.proctor.Agent.ReportEvent", {"session": sid, "event": "didBecomeActive",
                                                                "occurredAt": "five minutes ago"})
        assert reply["error"] == "io.proctor.Agent.InvalidParameter"
        assert reply["parameters"]["parameter"] == "occurredAt"
    [event] = events_json(daemon, "--kind", "lifecycle")
    assert event["occurredAt"] == rfc3339(earlier)
    assert event["receivedAt"] > event["occurredAt"]
    # The readable form says it arrived late; --since reads the time it occurred.
    line = proctorctl(daemon, "events", "--kind", "lifecycle", check=0).stdout
    assert "receivedAt=" in line
    assert events_json(daemon, "--kind", "lifecycle", "--since", "-2m") == []
    # GetApp's last event is the report, at its own time.
    detail = json.loads(proctorctl(daemon, "app", "io.proctor.test.notes", "--json", check=0).stdout)["app"]
    assert detail["lastEvent"] == {"event": "didEnterBackground", "at": rfc3339(earlier)}


def test_follow_prints_history_then_live_events_without_a_gap(daemon):
    with session(daemon) as (sock, sid):
        for event in ["didBecomeActive", "willResignActive", "didEnterBackground"]:
            report(sock, sid, event)
        follower = subprocess.Popen([os.path.join(BIN, "proctorctl"), "events", "--follow", "-n", "2", "--json",
                                     "--kind", "lifecycle", "--address", daemon.admin],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            seen = [json.loads(follower.stdout.readline()) for _ in range(2)]
            assert [e["data"]["event"] for e in seen] == ["willResignActive", "didEnterBackground"]
            for event in ["willEnterForeground", "didBecomeActive"]:
                report(sock, sid, event)
            seen += [json.loads(follower.stdout.readline()) for _ in range(2)]
            assert [e["data"]["event"] for e in seen[2:]] == ["willEnterForeground", "didBecomeActive"]
            assert [e["id"] for e in seen] == sorted({e["id"] for e in seen})
        finally:
            follower.terminate()
            follower.wait(timeout=10)


def test_events_after_a_cursor_are_replayed_before_live_ones(daemon):
    """The seam --follow relies on, through the bare protocol: EventHistory's lastId, then
    Events(after: lastId) sends what was recorded in between, once, then live events."""
    history = raw_call(daemon.admin, "io.proctor.Admin.EventHistory", {"limit": 1})["parameters"]
    with session(daemon) as (sock, sid):
        report(sock, sid, "didBecomeActive")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as admin:
            admin.settimeout(10)
            admin.connect(daemon.admin)
            first = exchange(admin, "io.proctor.Admin.Events", {"after": history["lastId"]}, more=True)
            assert first["parameters"]["event"]["kind"] == "registration"
            assert first["parameters"]["event"]["id"] == history["lastId"] + 1


def test_history_survives_a_restart_and_is_pruned_to_its_limit(workdir):
    d = Daemon(workdir, extra_args=["--event-history-limit", "5"])
    write_policy(d.config_dir, base_policy())
    d.start()
    before = []
    try:
        with session(d) as (sock, sid):
            for _ in range(4):
                report(sock, sid, "didBecomeActive")
        before = events_json(d)
        assert len(before) == 5
    finally:
        # kill -9: only what the batched write (every 100 ms) committed survives; wait until
        # the database has the batch, then kill.
        if before:
            wait_for_written(d, before[-1]["id"])
        d.stop(9)
    d.start()
    try:
        after = events_json(d)
        assert after == before
        with session(d) as (sock, sid):
            report(sock, sid, "willTerminate")
        # Pruning comes with the write: until then the queued events are shown too.
        wait_for_written(d, before[-1]["id"] + 2)
        kept = events_json(d)
        assert len(kept) == 5
        assert [e["id"] for e in kept] == [before[-1]["id"] + n for n in range(-2, 3)]
        assert kept[-1]["data"]["event"] == "willTerminate"
    finally:
        d.stop()
    # A clean stop writes the queue before it closes the store.
    d.start()
    try:
        assert events_json(d) == kept
    finally:
        d.stop()


def test_a_denial_is_logged_before_a_line_logged_after_it(daemon):
    """The loop keeps denials' log lines until the log writer's next wake-up, but hands them
    to the logger before any other line it logs: here a denial and a refused registration
    sent together, answered in one turn of the loop, are written in that order."""
    with session(daemon) as (sock, sid):
        calls = [{"method": "io.proctor.Agent.Decide", "parameters": {"session": sid, "action": "print"}},
                 {"method": "io.proctor.Agent.Register", "parameters": {"appId": "io.proctor.test.unlisted"}}]
        sock.sendall(b"".join(json.dumps(call).encode() + b"\0" for call in calls))
        replies = b""
        while replies.count(b"\0") < 2:
            replies += sock.recv(65536)
    refused = "Registration refused: io.proctor.test.unlisted"
    log = daemon.wait_for_log(refused)
    assert log.index("Denied print for io.proctor.test.notes") < log.index(refused), log


def test_a_flood_of_denials_faster_than_the_write_interval_keeps_every_event(daemon):
    """One app pipelining 30 000 denied Decides — faster than 10 000 (the queue's bound) per
    100 ms write interval — loses none from the history: half the bound waiting writes the
    queue at once. Before, the queue filled, dropped the oldest one at a time (each drop
    moving the whole queue) and the history lost thousands."""
    count = 30_000
    newest = events_json(daemon, "-n", "1")
    before = newest[-1]["id"] if newest else 0
    assert flood_denied_decides(daemon, count)["parameters"]["allowed"] is False
    wait_for_written(daemon, before + count + 1)  # the registration's event, then the decisions
    with sqlite3.connect(os.path.join(daemon.state_dir, "state.db")) as db:
        decisions = db.execute("SELECT count(*) FROM events WHERE kind = 'decision' AND id > ?", (before,)).fetchone()[0]
    assert decisions == count
    assert "dropped from the event history" not in daemon.log()
