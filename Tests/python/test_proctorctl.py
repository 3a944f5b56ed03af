"""The real proctorctl against the real proctord: every online verb, its --json and exit codes."""
import json
import os

from conftest import base_policy, proctorctl, raw_call


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f)
    return path


def test_status_and_apps(daemon):
    out = proctorctl(daemon, "status", check=0).stdout
    assert "test.1" in out
    status = json.loads(proctorctl(daemon, "status", "--json", check=0).stdout)
    assert status["policy"]["version"] == "test.1"
    apps = json.loads(proctorctl(daemon, "apps", "--json", check=0).stdout)
    assert {a["appId"] for a in apps["apps"]} >= {"io.proctor.test.notes", "io.proctor.test.blocked"}
    table = proctorctl(daemon, "apps", check=0).stdout
    assert "io.proctor.test.blocked" in table and "blocked" in table


def test_app_and_unknown_app(daemon):
    detail = json.loads(proctorctl(daemon, "app", "io.proctor.test.notes", "--json", check=0).stdout)
    assert detail["app"]["config"]["syncDays"] == 14
    refused = proctorctl(daemon, "app", "io.proctor.test.nope", check=4)
    assert "io.proctor.Admin.UnknownApp" in refused.stderr


def test_check_online_explains(daemon):
    denied = proctorctl(daemon, "check", "io.proctor.test.notes", "print", "--json", check=1)
    decision = json.loads(denied.stdout)
    assert decision["allowed"] is False
    assert decision["rule"] == 'apps["io.proctor.test.notes"].dlp.print'
    allowed = proctorctl(daemon, "check", "io.proctor.test.notes", "clipboard.copy", "io.proctor.test.mail",
                         "--size", "5", check=0)
    assert "allowed" in allowed.stdout.lower()


def test_policy_apply_diff_history_rollback(daemon, workdir):
    pushed = base_policy("pushed.1")
    pushed["apps"]["io.proctor.test.notes"]["config"] = {"syncDays": 30}
    path = write_json(os.path.join(workdir, "pushed.json"), pushed)
    assert proctorctl(daemon, "policy", "diff", path).returncode == 1
    proctorctl(daemon, "policy", "apply", path, "--expect-version", "test.1", check=0)
    assert proctorctl(daemon, "policy", "diff", path).returncode == 0
    conflict = proctorctl(daemon, "policy", "apply", path, "--expect-version", "test.1", check=4)
    assert "VersionConflict" in conflict.stderr
    shown = json.loads(proctorctl(daemon, "policy", "show", "--json", check=0).stdout)
    assert shown["info"]["version"] == "pushed.1"
    history = json.loads(proctorctl(daemon, "policy", "history", "--json", check=0).stdout)
    assert [e["version"] for e in history["entries"]] == ["pushed.1"]
    second = write_json(os.path.join(workdir, "second.json"), base_policy("pushed.2"))
    proctorctl(daemon, "policy", "apply", second, check=0)
    proctorctl(daemon, "policy", "rollback", "pushed.1", check=0)
    assert raw_call(daemon.admin, "io.proctor.Admin.Status")["parameters"]["policy"]["version"] == "pushed.1"
    broken = write_json(os.path.join(workdir, "broken.json"), {"schema": 1, "version": "x", "apps": {"bad id": {}}})
    assert proctorctl(daemon, "policy", "apply", broken).returncode in (2, 4)
    assert raw_call(daemon.admin, "io.proctor.Admin.Status")["parameters"]["policy"]["version"] == "pushed.1"


def test_a_version_names_one_content(daemon, workdir):
    first = write_json(os.path.join(workdir, "v1.json"), base_policy("pushed.v"))
    proctorctl(daemon, "policy", "apply", first, check=0)
    proctorctl(daemon, "policy", "apply", first, check=0)  # the same content again: fine
    changed = base_policy("pushed.v")
    changed["apps"]["io.proctor.test.notes"]["config"] = {"syncDays": 99}
    path = write_json(os.path.join(workdir, "v1-changed.json"), changed)
    refused = proctorctl(daemon, "policy", "apply", path, check=4)
    assert "io.proctor.Admin.VersionReused" in refused.stderr
    assert "version pushed.v was applied before with other content" in refused.stderr
    assert "--force" in refused.stderr
    detail = json.loads(proctorctl(daemon, "app", "io.proctor.test.notes", "--json", check=0).stdout)
    assert detail["app"]["config"]["syncDays"] != 99  # nothing changed
    # The raw call names both contents.
    reply = raw_call(daemon.admin, "io.proctor.Admin.ApplyPolicy", {"policy": changed})
    assert reply["error"] == "io.proctor.Admin.VersionReused"
    assert reply["parameters"]["version"] == "pushed.v"
    assert reply["parameters"]["sha256"] != reply["parameters"]["earlierSha256"]
    proctorctl(daemon, "policy", "apply", path, "--force", check=0)
    detail = json.loads(proctorctl(daemon, "app", "io.proctor.test.notes", "--json", check=0).stdout)
    assert detail["app"]["config"]["syncDays"] == 99


def test_reload_wipe_notify_and_events(daemon):
    proctorctl(daemon, "reload", check=0)
    wiped = json.loads(proctorctl(daemon, "wipe", "io.proctor.test.notes", "--json", check=0).stdout)
    assert wiped["deliveredTo"] == 0
    detail = json.loads(proctorctl(daemon, "app", "io.proctor.test.notes", "--json", check=0).stdout)
    assert [w["id"] for w in detail["app"]["wipes"]] == [wiped["directiveId"]]
    assert detail["app"]["wipes"][0]["state"] == "issued"
    delivered = json.loads(proctorctl(daemon, "notify", "io.proctor.test.notes", '{"command":"sync"}', "--json",
                                      check=0).stdout)
    assert delivered["delivered"] == 0
    assert proctorctl(daemon, "notify", "io.proctor.test.notes", "{not json").returncode == 2


def test_not_running(workdir):
    class Nowhere:
        admin = os.path.join(workdir, "no.sock")
    result = proctorctl(Nowhere, "status", check=3)
    assert result.stderr.strip() == f"proctorctl: proctord is not running at {Nowhere.admin}"


def test_app_shows_compliance_state_and_the_acknowledged_policy(workdir):
    from conftest import Daemon, this_executable, write_policy
    from test_events import session
    from varlink_raw import exchange
    old = {"state": "authorized", "match": {"executable": this_executable(), "users": ["*"]},
           "compliance": {"minVersion": "2.0.0", "onViolation": "block"}}
    d = Daemon(workdir)
    write_policy(d.config_dir, base_policy(**{"io.proctor.test.old": old}))
    d.start()
    try:
        assert "compliance state:   unknown (never registered)" in proctorctl(d, "app", "io.proctor.test.old", check=0).stdout
        with session(d, "io.proctor.test.notes") as (sock, sid):
            exchange(sock, "io.proctor.Agent.ReportFeedback", {"session": sid, "key": "policy", "severity": "info",
                                                               "message": "ok", "data": {"version": "test.1", "result": "applied"}})
        with socket_register(d, "io.proctor.test.old", "1.0.0"):
            pass
        notes = proctorctl(d, "app", "io.proctor.test.notes", check=0).stdout
        assert "compliance state:   compliant" in notes
        assert "policy applied:     current: test.1 applied at " in notes
        detail = json.loads(proctorctl(d, "app", "io.proctor.test.old", "--json", check=0).stdout)["app"]
        assert detail["policyVersion"] == "test.1"
        assert detail["complianceState"]["compliant"] is False
        assert "below compliance.minVersion" in detail["complianceState"]["reason"]
        assert "compliance state:   violation: " in proctorctl(d, "app", "io.proctor.test.old", check=0).stdout
    finally:
        d.stop()


def socket_register(daemon, app_id, version):
    import contextlib
    import socket
    from varlink_raw import exchange

    @contextlib.contextmanager
    def registered():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(daemon.agent)
            reply = exchange(sock, "io.proctor.Agent.Register", {"appId": app_id, "version": version})
            assert "error" not in reply, reply
            yield
    return registered()
