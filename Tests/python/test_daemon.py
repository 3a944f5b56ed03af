"""proctord driven through the independent Python `varlink` client (and raw sockets)."""
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import pytest
import varlink

from conftest import (BIN, Daemon, base_policy, proctorctl, raw_call, running_daemon,
                      this_executable, write_policy)


def agent(daemon):
    return varlink.Client(address="unix:" + daemon.agent)


def admin(daemon):
    return varlink.Client(address="unix:" + daemon.admin)


def error_name(excinfo):
    return excinfo.value.error()


def test_get_info_and_interface_descriptions(daemon):
    for path, interface in ((daemon.agent, "io.proctor.Agent"), (daemon.admin, "io.proctor.Admin")):
        with varlink.Client(address="unix:" + path) as client:
            info = client.open("org.varlink.service").GetInfo()
            assert interface in info["interfaces"]
            assert "org.varlink.service" in info["interfaces"]
            description = client.open("org.varlink.service").GetInterfaceDescription(interface)
            # The independent client parses our IDL; a parse error raises here.
            parsed = varlink.Interface(description["description"])
            assert parsed.name == interface


def test_unknown_method_and_interface(daemon):
    reply = raw_call(daemon.agent, "io.proctor.Agent.Nope", {})
    assert reply["error"] == "org.varlink.service.MethodNotFound"
    assert reply["parameters"]["method"] == "io.proctor.Agent.Nope"
    reply = raw_call(daemon.agent, "io.proctor.Admin.Status", {})
    assert reply["error"] == "org.varlink.service.InterfaceNotFound"
    reply = raw_call(daemon.agent, "io.proctor.Agent.Register", {"appId": 7})
    assert reply["error"] == "org.varlink.service.InvalidParameter"
    assert reply["parameters"]["parameter"] == "appId"


def test_register_decide_and_report(daemon):
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        reply = con.Register("io.proctor.test.notes", "1.2.0")
        assert reply["state"] == "authorized"
        assert reply["policyVersion"] == "test.1"
        assert reply["config"] == {"serverURL": "https://notes.example.com", "syncDays": 14}
        assert reply["dlp"]["clipboard"]["level"] == "managed"
        assert reply["managedApps"] == ["io.proctor.test.mail", "io.proctor.test.notes", "io.proctor.test.other-exe"]
        session = reply["session"]
        denied = con.Decide(session, "print")
        assert denied == {"allowed": False, "rule": 'apps["io.proctor.test.notes"].dlp.print',
                          "reason": denied["reason"]}
        # A denial is logged with its verdict, action, app and reason, and the rule as a field.
        line = "Denied print for io.proctor.test.notes: " + denied["reason"]
        assert line in daemon.wait_for_log(line)
        allowed = con.Decide(session, "clipboard.copy", "io.proctor.test.mail", 10)
        assert allowed["allowed"] is True
        outside = con.Decide(session, "clipboard.copy", "org.example.unmanaged", 10)
        assert outside["allowed"] is False
        con.ReportEvent(session, "didBecomeActive")
        con.ReportFeedback(session, "policy", "info", "applied test.1")
        with pytest.raises(varlink.VarlinkError) as excinfo:
            con.Decide("not-a-session", "print")
        assert error_name(excinfo) == "io.proctor.Agent.InvalidSession"
    with admin(daemon) as client, client.open("io.proctor.Admin") as con:
        app = con.GetApp("io.proctor.test.notes")["app"]
        assert app["state"] == "authorized"
        assert app["lastEvent"]["event"] == "didBecomeActive"
        assert any(f["key"] == "policy" and f["message"] == "applied test.1" for f in app["feedback"])
        status = con.Status()
        assert status["counts"]["decisionsDenied"] >= 2
        assert status["counts"]["decisionsAllowed"] >= 1


def test_identity_mismatch_and_unknown_app(daemon):
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        with pytest.raises(varlink.VarlinkError) as excinfo:
            con.Register("io.proctor.test.other-exe")
        assert error_name(excinfo) == "io.proctor.Agent.IdentityMismatch"
        with pytest.raises(varlink.VarlinkError) as excinfo:
            con.Register("io.proctor.test.not-in-policy")
        assert error_name(excinfo) == "io.proctor.Agent.UnknownApp"
    assert "Registration refused" in daemon.wait_for_log("Registration refused")


def test_a_wipe_names_its_app_by_bytes(daemon):
    """U+212A KELVIN SIGN is canonically equivalent to "K": a wipe of "io.proctor.test.\u212Ait"
    is not a wipe of the known app io.proctor.test.Kit (its keys and pending wipes are found by
    bytes), so it is refused as an unknown app rather than acknowledged and half done."""
    kit = "io.proctor.test.Kit"
    write_policy(daemon.config_dir, base_policy("test.2", **{kit: {
        "state": "authorized", "match": {"executable": this_executable(), "users": ["*"]}}}))
    assert raw_call(daemon.admin, "io.proctor.Admin.Reload")["parameters"]["result"]["ok"] is True
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        con.Register(kit)
    write_policy(daemon.config_dir, base_policy("test.3"))  # known from its registration only
    assert raw_call(daemon.admin, "io.proctor.Admin.Reload")["parameters"]["result"]["ok"] is True
    refused = raw_call(daemon.admin, "io.proctor.Admin.Wipe", {"appId": "io.proctor.test.\u212Ait"})
    assert refused.get("error") == "io.proctor.Admin.UnknownApp", refused
    assert "error" not in raw_call(daemon.admin, "io.proctor.Admin.Wipe", {"appId": kit})


def test_blocked_app_is_told_so(daemon):
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        reply = con.Register("io.proctor.test.blocked")
        assert reply["state"] == "blocked"
        decision = con.Decide(reply["session"], "launch")
        assert decision["allowed"] is False
        assert decision["rule"] == 'apps["io.proctor.test.blocked"].state'


def test_admin_decide_and_policy_methods(daemon):
    with admin(daemon) as client, client.open("io.proctor.Admin") as con:
        decision = con.Decide("io.proctor.test.notes", "file.export", "/tmp/x")
        assert set(decision) >= {"allowed", "rule", "reason"}
        policy = con.GetPolicy()
        assert policy["info"]["version"] == "test.1"
        assert len(policy["info"]["sha256"]) == 64
        assert "io.proctor.test.notes" in policy["policy"]["apps"]
        bad = dict(base_policy("bad.1"))
        bad["apps"] = {"io.proctor.test.notes": {"dlp": {"clipbord": {}}}}
        result = con.ValidatePolicy(bad)
        assert result["valid"] is False
        assert any("clipboard" in p["message"] for p in result["problems"])
        assert con.ValidatePolicy(base_policy("good.1"))["valid"] is True
        apps = {a["appId"]: a for a in con.ListApps()["apps"]}
        assert apps["io.proctor.test.blocked"]["state"] == "blocked"


def test_apply_conflict_history_and_rollback(daemon):
    with admin(daemon) as client, client.open("io.proctor.Admin") as con:
        applied = con.ApplyPolicy(base_policy("pushed.1"), "test.1")
        assert applied["version"] == "pushed.1"
        with pytest.raises(varlink.VarlinkError) as excinfo:
            con.ApplyPolicy(base_policy("pushed.2"), "test.1")
        assert error_name(excinfo) == "io.proctor.Admin.VersionConflict"
        con.ApplyPolicy(base_policy("pushed.2"), "pushed.1")
        versions = [e["version"] for e in con.PolicyHistory()["entries"]]
        assert versions[:2] == ["pushed.2", "pushed.1"]
        con.RollbackPolicy("pushed.1")
        assert con.Status()["policy"]["version"] == "pushed.1"
        with pytest.raises(varlink.VarlinkError) as excinfo:
            con.RollbackPolicy("never-applied")
        assert error_name(excinfo) == "io.proctor.Admin.UnknownVersion"


def test_subscriber_hears_pushed_change_for_its_app_only(daemon):
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        session = con.Register("io.proctor.test.notes")["session"]
        stream = con.Subscribe(session, _more=True)
        first = next(stream)
        assert first["config"]["syncDays"] == 14
        # A change to another app only: no reply for this subscriber.
        other = base_policy("pushed.other")
        other["apps"]["io.proctor.test.mail"]["dlp"] = {"print": "block"}
        changed = base_policy("pushed.notes")
        changed["apps"]["io.proctor.test.notes"]["config"] = {"syncDays": 30}
        with admin(daemon) as aclient, aclient.open("io.proctor.Admin") as acon:
            acon.ApplyPolicy(other)
            acon.ApplyPolicy(changed)
            acon.Notify("io.proctor.test.notes", {"command": "sync"})
        update = next(stream)
        assert update["policyVersion"] == "pushed.notes"
        assert update["config"] == {"syncDays": 30}
        assert update.get("managedApps") is None  # the set did not change: not sent again
        pushed = next(stream)
        assert pushed["notification"] == {"command": "sync"}


def test_subscriber_hears_a_change_of_the_managed_apps(daemon):
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        session = con.Register("io.proctor.test.notes")["session"]
        stream = con.Subscribe(session, _more=True)
        # Register sent the set; the first Subscribe reply leaves the unchanged set out.
        assert next(stream).get("managedApps") is None
        # Only another app is added: this app's own rules are unchanged, but the SDK decides
        # copies and shares towards the managed apps locally, so it must hear of it.
        grown = base_policy("pushed.grown", **{"io.proctor.test.new": {"state": "authorized"}})
        with admin(daemon) as aclient, aclient.open("io.proctor.Admin") as acon:
            acon.ApplyPolicy(grown)
        update = next(stream)
        assert update["reason"] == "policy"
        assert "io.proctor.test.new" in update["managedApps"]


def test_each_subscriber_of_a_push_gets_the_update_for_its_own_version(daemon):
    # proctord encodes each distinct update of a push once and sends those bytes on: sessions
    # of one app at different versions, registered in turns, must still each get their own verdict.
    versions = ["1.0.0", "2.5.0", "1.0.0", "2.5.0"]
    with contextlib.ExitStack() as stack:
        streams = []
        for version in versions:
            client = stack.enter_context(agent(daemon))
            con = stack.enter_context(client.open("io.proctor.Agent"))
            stream = con.Subscribe(con.Register("io.proctor.test.notes", version)["session"], _more=True)
            assert next(stream)["launch"]["allowed"]
            streams.append(stream)
        raised = base_policy("pushed.min2")
        raised["apps"]["io.proctor.test.notes"]["compliance"] = {"minVersion": "2.0.0", "onViolation": "block"}
        with admin(daemon) as aclient, aclient.open("io.proctor.Admin") as acon:
            acon.ApplyPolicy(raised)
        updates = [next(stream) for stream in streams]
    assert [update["launch"]["allowed"] for update in updates] == [False, True, False, True]
    assert all(update["reason"] == "policy" and update["policyVersion"] == "pushed.min2" for update in updates)
    assert updates[0] == updates[2] and updates[1] == updates[3]


def test_wipe_delivery_and_acknowledgement(daemon):
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        session = con.Register("io.proctor.test.notes")["session"]
        stream = con.Subscribe(session, _more=True)
        next(stream)
        with admin(daemon) as aclient, aclient.open("io.proctor.Admin") as acon:
            wiped = acon.Wipe("io.proctor.test.notes")
            assert wiped["deliveredTo"] == 1
            directive_id = wiped["directiveId"]
        update = next(stream)
        assert [d["id"] for d in update["directives"]] == [directive_id]
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        reply = con.Register("io.proctor.test.notes")
        assert [d["id"] for d in reply["directives"]] == [directive_id]
        con.AcknowledgeWipe(reply["session"], directive_id)
        assert con.Register("io.proctor.test.notes")["directives"] == []


def test_events_stream(daemon):
    import socket
    # The Python client sends a `more` call only when its generator is first advanced,
    # so the stream is opened by hand here, before the events it must see.
    with socket.socket(socket.AF_UNIX) as events:
        events.settimeout(10)
        events.connect(daemon.admin)
        events.sendall(json.dumps({"method": "io.proctor.Admin.Events", "more": True,
                                   "parameters": {"filter": {"appId": "io.proctor.test.notes"}}}).encode() + b"\0")
        time.sleep(0.2)  # let the daemon register the stream before the events happen
        with agent(daemon) as client, client.open("io.proctor.Agent") as con:
            session = con.Register("io.proctor.test.notes")["session"]
            con.Decide(session, "print")
            con.Register("io.proctor.test.mail")  # another app: filtered out
        buffer = b""
        kinds, actions = [], []
        while kinds.count("decision") < 2:
            buffer += events.recv(65536)
            *messages, buffer = buffer.split(b"\0")
            for message in messages:
                reply = json.loads(message)
                assert reply["continues"] is True
                event = reply["parameters"]["event"]
                assert event["appId"] == "io.proctor.test.notes"
                kinds.append(event["kind"])
                if event["kind"] == "decision":
                    actions.append(event["data"]["action"])
        # Registration decides `launch` (the verdict the Register reply carries), then the print.
        assert kinds == ["registration", "decision", "decision"]
        assert actions == ["launch", "print"]


def test_notify_to_an_app_not_running_is_queued_durably_and_delivered_at_registration(daemon):
    queued = proctorctl(daemon, "notify", "io.proctor.test.notes", '{"command": "sync"}', check=0)
    assert queued.stdout.startswith("queued: no session of io.proctor.test.notes is subscribed")
    reply = raw_call(daemon.admin, "io.proctor.Admin.Notify",
                     {"appId": "io.proctor.test.notes", "payload": {"command": "rotate"}, "ttlSeconds": 3600})
    assert reply["parameters"]["delivered"] == 0 and "queuedUntil" in reply["parameters"]
    short = raw_call(daemon.admin, "io.proctor.Admin.Notify",
                     {"appId": "io.proctor.test.notes", "payload": {"command": "expired"}, "ttlSeconds": 1})
    assert "queuedUntil" in short["parameters"]
    not_kept = proctorctl(daemon, "notify", "--ttl", "0", "io.proctor.test.notes", '{"command": "now-or-never"}', check=0)
    assert "nobody received it" in not_kept.stdout
    assert proctorctl(daemon, "notify", "--ttl", "31d", "io.proctor.test.notes", "{}", check=2).returncode == 2
    too_long = raw_call(daemon.admin, "io.proctor.Admin.Notify",
                        {"appId": "io.proctor.test.notes", "payload": {}, "ttlSeconds": 2592001})
    assert too_long["error"] == "io.proctor.Admin.InvalidParameter"
    assert too_long["parameters"]["parameter"] == "ttlSeconds"
    # The queue is in the state directory: it survives a restart.
    daemon.stop()
    daemon.start()
    time.sleep(1.1)  # the one-second command expires meanwhile
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        session = con.Register("io.proctor.test.notes")["session"]
        stream = con.Subscribe(session, _more=True)
        assert next(stream)["reason"] == "current"
        delivered = [next(stream), next(stream)]
        assert [u["reason"] for u in delivered] == ["notification", "notification"]
        assert [u["notification"] for u in delivered] == [{"command": "sync"}, {"command": "rotate"}]
    # Delivered once: the next registration gets nothing more.
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        session = con.Register("io.proctor.test.notes")["session"]
        stream = con.Subscribe(session, _more=True)
        assert next(stream)["reason"] == "current"
        reply = raw_call(daemon.admin, "io.proctor.Admin.Notify", {"appId": "io.proctor.test.notes", "payload": {"n": 1}})
        assert reply["parameters"] == {"delivered": 1}
        assert next(stream)["notification"] == {"n": 1}


def test_reload_with_broken_policy_keeps_old(daemon):
    with open(os.path.join(daemon.config_dir, "policy.d", "50-broken.json"), "w") as f:
        f.write('{"schema": 1, "apps": {"bad id": {}}}')
    with admin(daemon) as client, client.open("io.proctor.Admin") as con:
        result = con.Reload()["result"]
        assert result["ok"] is False
        assert result["problems"][0]["path"] == 'apps["bad id"]'
        assert result["problems"][0]["line"] == 1
        status = con.Status()
        assert status["policy"]["version"] == "test.1"
        assert status["lastReload"]["ok"] is False
    os.unlink(os.path.join(daemon.config_dir, "policy.d", "50-broken.json"))
    write_policy(daemon.config_dir, base_policy("test.2"))
    daemon.process.send_signal(1)  # SIGHUP
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if raw_call(daemon.admin, "io.proctor.Admin.Status")["parameters"]["policy"]["version"] == "test.2":
            break
        time.sleep(0.05)
    assert raw_call(daemon.admin, "io.proctor.Admin.Status")["parameters"]["policy"]["version"] == "test.2"


def test_reload_of_changed_content_under_the_same_version_is_refused(daemon):
    changed = base_policy("test.1")
    changed["apps"]["io.proctor.test.notes"]["config"] = {"syncDays": 99}
    write_policy(daemon.config_dir, changed)
    with admin(daemon) as client, client.open("io.proctor.Admin") as con:
        before = con.Status()["policy"]["sha256"]
        result = con.Reload()["result"]
        assert result["ok"] is False
        assert result["problems"][0]["path"] == "version"
        assert "version test.1 was loaded before with other content" in result["problems"][0]["message"]
        assert con.Status()["policy"]["sha256"] == before  # the old policy stays in force
        write_policy(daemon.config_dir, base_policy("test.1"))  # the same content again: fine
        assert con.Reload()["result"]["ok"] is True
        changed["version"] = "test.2"
        write_policy(daemon.config_dir, changed)
        assert con.Reload()["result"]["ok"] is True
        assert con.Status()["policy"]["version"] == "test.2"


def test_a_version_respelt_in_another_unicode_form_is_another_version(daemon):
    """Versions are named by their bytes, as the policy history stores them: "caf\u00e9.1" and
    "cafe\u0301.1" are canonically equivalent (String's ==) but two versions. A policy.d reload
    to the other one is not a reused version; a compare-and-swap naming the other one conflicts."""
    composed, decomposed = "caf\u00e9.1", "cafe\u0301.1"
    write_policy(daemon.config_dir, base_policy(composed))
    assert raw_call(daemon.admin, "io.proctor.Admin.Reload")["parameters"]["result"]["ok"] is True
    changed = base_policy(decomposed)
    changed["apps"]["io.proctor.test.notes"]["config"] = {"syncDays": 99}
    write_policy(daemon.config_dir, changed)
    result = raw_call(daemon.admin, "io.proctor.Admin.Reload")["parameters"]
    assert result["result"]["ok"] is True, result
    assert result["policy"]["version"].encode() == decomposed.encode()
    with admin(daemon) as client, client.open("io.proctor.Admin") as con:
        with pytest.raises(varlink.VarlinkError) as excinfo:
            con.ApplyPolicy(base_policy("pushed.1"), composed)
        assert error_name(excinfo) == "io.proctor.Admin.VersionConflict"
        assert con.ApplyPolicy(base_policy("pushed.1"), decomposed)["version"] == "pushed.1"


def test_second_daemon_on_same_directory_refuses(daemon):
    second = Daemon(daemon.root)
    second.stderr_path = os.path.join(daemon.root, "second.stderr")
    second.start(wait_ready=False)
    assert second.process.wait(timeout=20) != 0
    assert "already running" in second.log()
    # The first still serves.
    assert raw_call(daemon.admin, "io.proctor.Admin.Status")["parameters"]["policy"]["version"] == "test.1"


def test_admin_permission_denied_for_unprivileged_user(daemon):
    os.chmod(daemon.admin, 0o666)  # past the file mode: the per-call check must still refuse
    script = os.path.join(daemon.root, "client.py")
    with open(script, "w") as f:
        f.write("import json,socket,sys\n"
                "s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1])\n"
                "s.sendall(json.dumps({'method':'io.proctor.Admin.Status'}).encode()+b'\\0')\n"
                "d=b''\n"
                "while not d.endswith(b'\\0'): d+=s.recv(4096)\n"
                "print(json.loads(d[:-1])['error'])\n")
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          "/usr/bin/python3", script, daemon.admin],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "org.varlink.service.PermissionDenied", out.stderr


def test_oversized_and_invalid_messages_close_only_that_client(daemon):
    import socket
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(daemon.agent)
        s.sendall(b"{not json}\0")
        data = s.recv(65536)
        assert b"org.varlink.service" in data or data == b""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(daemon.agent)
        try:
            s.sendall(b"{" + b" " * (2 << 20))
        except (BrokenPipeError, ConnectionResetError):
            pass
    assert raw_call(daemon.admin, "io.proctor.Admin.Status")["parameters"]["policy"]["version"] == "test.1"


def test_stalled_half_message_does_not_delay_others_and_times_out(workdir):
    import socket
    with running_daemon(workdir, "--message-timeout", "1") as d:
        with socket.socket(socket.AF_UNIX) as stalled, socket.socket(socket.AF_UNIX) as silent:
            stalled.connect(d.agent)
            stalled.sendall(b'{"method": "org.varlink.service.GetInfo", "param')  # ... and nothing more
            silent.connect(d.agent)  # a client that connects and never reads or writes
            # Served while the others stall (raw_call fails after its own timeout otherwise).
            for _ in range(20):
                assert raw_call(d.admin, "io.proctor.Admin.Status")["parameters"]["policy"]["version"] == "test.1"
            stalled.settimeout(10)
            assert stalled.recv(1) == b""  # closed by the daemon after the message timeout


def test_status_counts_the_known_apps_as_the_listing_does_across_every_change(daemon, workdir):
    """`appsKnown` comes from memory: it must stay the size of `ListApps` (the store's query and
    the policy) across a registration, a lifecycle report, a wipe, a reload, a pushed policy
    and a restart."""
    def counted():
        status = raw_call(daemon.admin, "io.proctor.Admin.Status")["parameters"]["counts"]["appsKnown"]
        listed = raw_call(daemon.admin, "io.proctor.Admin.ListApps")["parameters"]["apps"]
        assert status == len(listed), (status, [app["appId"] for app in listed])
        return status

    assert counted() == 4  # the policy's apps; the store knows none
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        session = con.Register("io.proctor.test.notes")["session"]
        con.ReportEvent(session, "didFinishLaunching")
        assert counted() == 4
        # Never registered: the wipe makes the store know it.
        assert "error" not in raw_call(daemon.admin, "io.proctor.Admin.Wipe", {"appId": "io.proctor.test.other-exe"})
        assert counted() == 4
        # Only mail stays in policy; notes and other-exe stay known through the store, blocked goes.
        only_mail = base_policy("test.2")
        for app_id in ("io.proctor.test.notes", "io.proctor.test.other-exe", "io.proctor.test.blocked"):
            del only_mail["apps"][app_id]
        write_policy(daemon.config_dir, only_mail)
        proctorctl(daemon, "reload", check=0)
        assert counted() == 3
        # The session registered before the reload still reports.
        con.ReportFeedback(session, "sync", "info", "still here")
        assert counted() == 3
    daemon.stop()
    daemon.start()
    assert counted() == 3
    # A pushed policy naming a new app and blocked again.
    pushed = base_policy("pushed.1", **{"io.proctor.test.extra": {"state": "authorized", "match": {"executable": this_executable()}}})
    path = os.path.join(workdir, "pushed.json")
    with open(path, "w") as f:
        json.dump(pushed, f)
    proctorctl(daemon, "policy", "apply", path, check=0)
    assert counted() == 5
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        con.Register("io.proctor.test.extra")
    assert counted() == 5
