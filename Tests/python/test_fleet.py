"""Signed bundles pulled over real HTTPS: proctord (built binary) polls bundle_server.py, an MDM
stand-in with a CA and certificates made by openssl, verifies with keys.d, applies or refuses,
and reports it in Status; `proctorctl policy apply` of a bundle goes through the same checks."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
import varlink

from conftest import BIN, REPO, Daemon, base_policy, proctorctl, write_policy

SERVER = os.path.join(REPO, "Tests", "ProctorFleetTests", "bundle_server.py")


class MDM:
    """bundle_server.py in a directory of its own; /bundle serves DIR/bundle."""

    def __init__(self, root, *options):
        self.dir = os.path.join(root, "mdm")
        os.makedirs(self.dir)
        self.process = subprocess.Popen([sys.executable, SERVER, *options, self.dir], stdout=subprocess.PIPE, text=True)
        fields = self.process.stdout.readline().split()
        assert fields and fields[0] == "READY", fields
        self.port = int(fields[1])

    def url(self, path="bundle", host="localhost"):
        return f"https://{host}:{self.port}/{path}"

    def publish(self, data):
        with open(os.path.join(self.dir, "bundle"), "wb") as f:
            f.write(data)

    def stop(self):
        self.process.kill()
        self.process.wait()


def ctl(*args, check=0):
    result = subprocess.run([os.path.join(BIN, "proctorctl"), *args], capture_output=True, timeout=30)
    assert result.returncode == check, (result.returncode, result.stdout, result.stderr)
    return result.stdout


def sign(key, policy, root, serial, expires_in=3600):
    path = os.path.join(root, f"policy-{serial}.json")
    with open(path, "w") as f:
        json.dump(policy, f)
    return ctl("policy", "sign", "--key", key, "--serial", str(serial), "--expires-in", str(expires_in), path)


def status(daemon):
    return json.loads(proctorctl(daemon, "status", "--json", check=0).stdout)


def wait_for_result(daemon, predicate, timeout=20):
    """Status once `predicate` holds for it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = status(daemon)
        if predicate(reply):
            return reply
        time.sleep(0.1)
    raise AssertionError(f"Status never matched: {status(daemon)}")


def wait_for_fetch(daemon, last_fetch_at, timeout=20):
    """Status once a fetch other than the one at `last_fetch_at` has been reported."""
    return wait_for_result(daemon, lambda r: r["fleet"].get("lastFetchAt") not in (None, last_fetch_at), timeout)


@pytest.fixture
def fleet(workdir):
    mdm = MDM(workdir)
    key = os.path.join(workdir, "mdm-key")
    ctl("policy", "keygen", "--out", key)
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy("local.1"))
    os.makedirs(os.path.join(daemon.config_dir, "keys.d"))
    os.link(key + ".pub", os.path.join(daemon.config_dir, "keys.d", "mdm.pub"))
    yield mdm, key, daemon
    daemon.stop()
    mdm.stop()


def configure(daemon, mdm, url=None, require_signed=False, interval=1, status=""):
    with open(os.path.join(daemon.config_dir, "proctord.conf"), "w") as f:
        f.write(f"[Source]\nBundleURL={url or mdm.url()}\nPollIntervalSec={interval}\n"
                f"CACertificate={mdm.dir}/ca.pem\n{status}[Policy]\nRequireSignedBundles={'yes' if require_signed else 'no'}\n")


def posts(mdm):
    """The status documents the MDM received, fetched from its /log with curl."""
    out = subprocess.run(["curl", "-sf", "--cacert", f"{mdm.dir}/ca.pem", mdm.url("log")], capture_output=True, timeout=10)
    return json.loads(out.stdout)["posts"] if out.returncode == 0 else []


def wait_for_post(mdm, predicate, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for document in posts(mdm):
            if predicate(document):
                return document
        time.sleep(0.1)
    raise AssertionError(f"no such status POST: {posts(mdm)}")


def next_fetch(daemon, reply):
    """The outcome of the poll after the one `reply` reported (a reload polls at once)."""
    return wait_for_fetch(daemon, reply["fleet"].get("lastFetchAt"))


def test_pull_apply_push_then_unchanged_and_every_refusal_keeps_the_policy(fleet, workdir):
    mdm, key, daemon = fleet
    first = base_policy("fleet.1")
    first["apps"]["io.proctor.test.notes"]["config"] = {"syncDays": 1}
    mdm.publish(sign(key, first, workdir, serial=100))
    configure(daemon, mdm, interval=3600)
    daemon.start()
    reply = wait_for_fetch(daemon, None)
    assert reply["fleet"]["lastFetchResult"] == "applied", reply
    assert reply["policy"]["version"] == "fleet.1"
    assert reply["fleet"]["lastAppliedSerial"] == 100
    assert "BUNDLE_SERIAL=100" in daemon.wait_for_log("BUNDLE_SERIAL=100")

    # A subscribed app hears the next serial's policy.
    with varlink.Client(address="unix:" + daemon.agent) as client, client.open("io.proctor.Agent") as con:
        session = con.Register("io.proctor.test.notes")["session"]
        stream = con.Subscribe(session, _more=True)
        assert next(stream)["config"] == {"syncDays": 1}
        second = base_policy("fleet.2")
        second["apps"]["io.proctor.test.notes"]["config"] = {"syncDays": 2}
        mdm.publish(sign(key, second, workdir, serial=101))
        proctorctl(daemon, "reload", check=0)
        update = next(stream)
        assert update["policyVersion"] == "fleet.2" and update["config"] == {"syncDays": 2}
    reply = status(daemon)
    assert reply["fleet"]["lastAppliedSerial"] == 101

    # Unchanged: a reload polls at once, and the server answers If-None-Match with a 304.
    proctorctl(daemon, "reload", check=0)
    reply = next_fetch(daemon, reply)
    assert reply["fleet"]["lastFetchResult"] == "unchanged"

    stranger = os.path.join(workdir, "stranger")
    ctl("policy", "keygen", "--out", stranger)
    old = sign(key, base_policy("fleet.old"), workdir, serial=50)
    valid = sign(key, base_policy("fleet.3"), workdir, serial=200)
    # A bundle is the envelope on one line, then the policy's exact bytes.
    line, policy_bytes = valid.split(b"\n", 1)
    envelope = json.loads(line)
    sig = envelope["signatures"][0]["sig"]
    envelope["signatures"][0]["sig"] = sig[:10] + ("A" if sig[10] != "A" else "B") + sig[11:]
    wrong_type = json.loads(line)
    wrong_type["payloadType"] = "application/json"
    altered_policy = policy_bytes.replace(b'"fleet.3"', b'"fleet.4"')
    assert altered_policy != policy_bytes
    cases = [
        ("bad-signature", json.dumps(envelope).encode() + b"\n" + policy_bytes),
        ("bad-signature", line + b"\n" + altered_policy),
        ("unknown-key", sign(stranger, base_policy("fleet.evil"), workdir, serial=300)),
        ("rollback", old),
        ("expired", sign(key, base_policy("fleet.late"), workdir, serial=400, expires_in=1)),
        ("malformed", valid[: len(valid) // 2]),
        ("wrong-payload-type", json.dumps(wrong_type).encode() + b"\n" + policy_bytes),
    ]
    time.sleep(1.5)  # the expired case's bundle is past its expiresAt
    for reason, body in cases:
        mdm.publish(body)
        proctorctl(daemon, "reload", check=0)
        reply = next_fetch(daemon, reply)
        assert reply["fleet"]["lastFetchResult"] == "refused", (reason, reply["fleet"])
        assert reply["fleet"]["lastError"]["reason"] == reason, (reason, reply["fleet"])
        assert reply["policy"]["version"] == "fleet.2", reason
        assert reply["fleet"]["lastAppliedSerial"] == 101
        assert f"REASON={reason}" in daemon.wait_for_log(f"REASON={reason}")
    text = proctorctl(daemon, "status", check=0).stdout
    assert f"source:       {mdm.url()}" in text
    assert "last error:" in text and "wrong-payload-type" in text


@pytest.mark.parametrize("path,reason", [("truncated", "truncated"), ("status/503", "http-status")])
def test_fetch_failures_keep_the_policy_and_show_the_reason(fleet, path, reason):
    mdm, key, daemon = fleet
    configure(daemon, mdm, url=mdm.url(path))
    daemon.start()
    reply = wait_for_fetch(daemon, None)
    assert reply["fleet"]["lastFetchResult"] == "failed"
    assert reply["fleet"]["lastError"]["reason"] == reason
    assert reply["policy"]["version"] == "local.1"
    assert "nextFetchAt" in reply["fleet"]
    assert f"REASON={reason}" in daemon.wait_for_log(f"REASON={reason}")


def test_tls_name_mismatch_and_server_down_are_failures(fleet):
    mdm, key, daemon = fleet
    configure(daemon, mdm, url=mdm.url(host="127.0.0.1"))
    daemon.start()
    reply = wait_for_fetch(daemon, None)
    assert reply["fleet"]["lastError"]["reason"] == "tls", reply["fleet"]
    mdm.stop()
    configure(daemon, mdm, url=mdm.url())
    proctorctl(daemon, "reload", check=0)
    reply = next_fetch(daemon, reply)
    assert reply["fleet"]["lastError"]["reason"] == "unreachable", reply["fleet"]
    assert reply["policy"]["version"] == "local.1"


def test_proctorctl_apply_of_bundles_and_require_signed(fleet, workdir):
    mdm, key, daemon = fleet
    with open(os.path.join(daemon.config_dir, "proctord.conf"), "w") as f:
        f.write("[Policy]\nRequireSignedBundles=yes\n")
    daemon.start()
    bundle = os.path.join(workdir, "b.json")
    with open(bundle, "wb") as f:
        f.write(sign(key, base_policy("signed.1"), workdir, serial=7))
    out = proctorctl(daemon, "policy", "apply", bundle, check=0).stdout
    assert out.startswith("applied: signed bundle serial 7, version signed.1 is in force")
    again = proctorctl(daemon, "policy", "apply", bundle, check=4)
    assert "BundleRefused" in again.stderr and "(rollback)" in again.stderr
    plain = os.path.join(workdir, "plain.json")
    with open(plain, "w") as f:
        json.dump(base_policy("plain.1"), f)
    refused = proctorctl(daemon, "policy", "apply", plain, check=4)
    assert "(unsigned)" in refused.stderr
    assert "(unsigned)" in proctorctl(daemon, "policy", "rollback", "signed.1", check=4).stderr
    reply = status(daemon)
    assert reply["policy"]["version"] == "signed.1"
    assert reply["fleet"]["requireSignedBundles"] is True
    assert reply["fleet"]["lastError"]["reason"] == "unsigned"
    # The serial survives a restart: the same bundle is still a replay.
    daemon.stop()
    daemon.start()
    assert "(rollback)" in proctorctl(daemon, "policy", "apply", bundle, check=4).stderr


def test_a_broken_proctord_conf_stops_start_up_and_a_broken_reload_keeps_the_settings(fleet, workdir):
    mdm, key, daemon = fleet
    conf = os.path.join(daemon.config_dir, "proctord.conf")
    with open(conf, "w") as f:
        f.write("[Source]\nPollIntervalSec=soon\n")
    with pytest.raises(RuntimeError):
        daemon.start()
    assert daemon.process.wait(timeout=10) == 78
    assert f"{conf}:2: PollIntervalSec=: expected a whole number of seconds" in daemon.log()
    mdm.publish(sign(key, base_policy("fleet.1"), workdir, serial=5))
    configure(daemon, mdm, interval=3600)
    daemon.start()
    assert wait_for_fetch(daemon, None)["fleet"]["lastFetchResult"] == "applied"
    with open(conf, "a") as f:
        f.write("Bogus=1\n")
    proctorctl(daemon, "reload", check=0)
    reply = status(daemon)
    assert reply["fleet"]["bundleUrl"] == mdm.url()
    assert reply["fleet"]["lastError"]["reason"] == "configuration"
    assert "unknown key in [Policy]" in daemon.wait_for_log("Fleet settings not reloaded")


def test_a_password_with_an_unescaped_slash_stops_start_up_without_showing_it(fleet, workdir):
    """libcurl ends the host at the first "/" after "//": such a password would not be sent as one
    (docs/fleet.md). proctord refuses the URL, naming the setting, and shows no byte of the
    password; percent-encoded, the same password is accepted."""
    mdm, key, daemon = fleet
    conf = os.path.join(daemon.config_dir, "proctord.conf")
    configure(daemon, mdm, url=f"https://fleet:SeCrEt1/SeCrEt2@localhost:{mdm.port}/bundle", interval=3600)
    with pytest.raises(RuntimeError):
        daemon.start()
    assert daemon.process.wait(timeout=10) == 78
    assert (f'{conf}:2: BundleURL=: expected "@" only once, after the user name and password' in daemon.log())
    assert f'found "https://<redacted>@localhost:{mdm.port}/bundle"' in daemon.log()
    assert "SeCrEt" not in daemon.log()
    mdm.publish(sign(key, base_policy("fleet.1"), workdir, serial=5))
    configure(daemon, mdm, url=f"https://fleet:SeCrEt1%2FSeCrEt2@localhost:{mdm.port}/bundle", interval=3600)
    daemon.start()
    reply = wait_for_fetch(daemon, None)
    assert reply["fleet"]["lastFetchResult"] == "applied"
    assert reply["fleet"]["bundleUrl"] == f"https://<redacted>@localhost:{mdm.port}/bundle"
    assert "SeCrEt" not in daemon.log()


def test_status_documents_are_posted_after_apply_and_refusal(fleet, workdir):
    mdm, key, daemon = fleet
    mdm.publish(sign(key, base_policy("fleet.1"), workdir, serial=100))
    configure(daemon, mdm, interval=3600, status=f"StatusURL={mdm.url('report')}\nStatusIntervalSec=600\n")
    daemon.start()
    applied = wait_for_post(mdm, lambda d: d["status"]["fleet"].get("lastAppliedSerial") == 100)
    with open("/etc/machine-id") as f:
        assert applied["machineId"] == f.read().strip()
    assert applied["status"]["policy"]["version"] == "fleet.1"
    assert applied["status"]["fleet"]["lastFetchResult"] == "applied"
    apps = {app["appId"]: app for app in applied["apps"]}
    assert apps["io.proctor.test.notes"]["state"] == "authorized"
    assert apps["io.proctor.test.blocked"]["state"] == "blocked"
    assert {"feedback", "acknowledgements", "wipes", "sessions"} <= set(apps["io.proctor.test.notes"])
    mdm.publish(sign(key, base_policy("fleet.0"), workdir, serial=99))
    proctorctl(daemon, "reload", check=0)
    refused = wait_for_post(mdm, lambda d: (d["status"]["fleet"].get("lastError") or {}).get("reason") == "rollback")
    assert refused["status"]["policy"]["version"] == "fleet.1"


def test_a_status_document_lists_every_known_app_as_proctorctl_app_shows_it(fleet, workdir):
    mdm, key, daemon = fleet
    local = base_policy("local.1")
    del local["apps"]["io.proctor.test.mail"]  # only the bundles name it
    write_policy(daemon.config_dir, local)
    mdm.publish(sign(key, base_policy("fleet.1"), workdir, serial=100))
    configure(daemon, mdm, interval=3600, status=f"StatusURL={mdm.url('report')}\nStatusIntervalSec=1\n")
    daemon.start()
    assert wait_for_fetch(daemon, None)["fleet"]["lastFetchResult"] == "applied"
    with varlink.Client(address="unix:" + daemon.agent) as client, client.open("io.proctor.Agent") as con:
        # mail registers once and leaves the policy: only the store knows it then.
        con.Register("io.proctor.test.mail")
    second = base_policy("fleet.2")
    del second["apps"]["io.proctor.test.mail"]
    mdm.publish(sign(key, second, workdir, serial=101))
    proctorctl(daemon, "reload", check=0)
    with varlink.Client(address="unix:" + daemon.agent) as client, client.open("io.proctor.Agent") as con:
        session = con.Register("io.proctor.test.notes")["session"]
        con.ReportFeedback(session, "policy", "info", "applied fleet.2")

        def settled(document):
            apps = {app["appId"]: app for app in document["apps"]}
            notes = apps.get("io.proctor.test.notes", {})
            return (document["status"]["policy"]["version"] == "fleet.2" and len(notes.get("sessions", [])) == 1
                    and len(notes.get("feedback", [])) == 1)
        document = wait_for_post(mdm, settled)
        known = [app["appId"] for app in json.loads(proctorctl(daemon, "apps", "--json", check=0).stdout)["apps"]]
        assert "io.proctor.test.mail" in known and [app["appId"] for app in document["apps"]] == sorted(known)
        assert document["status"]["counts"]["appsKnown"] == len(known)
        for app in document["apps"]:
            shown = json.loads(proctorctl(daemon, "app", app["appId"], "--json", check=0).stdout)["app"]
            assert app == shown
    mail = next(app for app in document["apps"] if app["appId"] == "io.proctor.test.mail")
    assert not mail["inPolicy"] and mail["lastRegistration"]


def test_status_max_apps_lists_the_most_relevant_apps_and_says_how_many_it_left_out(fleet, workdir):
    """StatusMaxApps=2 of the four known apps: notes (running), then mail (registered, gone)."""
    mdm, key, daemon = fleet
    mdm.publish(sign(key, base_policy("fleet.1"), workdir, serial=100))
    configure(daemon, mdm, interval=3600,
              status=f"StatusURL={mdm.url('report')}\nStatusIntervalSec=1\nStatusMaxApps=2\n")
    daemon.start()
    assert wait_for_fetch(daemon, None)["fleet"]["lastFetchResult"] == "applied"
    with varlink.Client(address="unix:" + daemon.agent) as client, client.open("io.proctor.Agent") as con:
        con.Register("io.proctor.test.mail")
    with varlink.Client(address="unix:" + daemon.agent) as client, client.open("io.proctor.Agent") as con:
        con.Register("io.proctor.test.notes")

        def listed(document):
            notes = next((app for app in document["apps"] if app["appId"] == "io.proctor.test.notes"), {})
            return len(notes.get("sessions", [])) == 1
        document = wait_for_post(mdm, listed)
    assert [app["appId"] for app in document["apps"]] == ["io.proctor.test.mail", "io.proctor.test.notes"]
    assert document["status"]["counts"]["appsKnown"] == 4
    assert document["appsLeftOut"] == 2


def test_while_the_store_cannot_be_opened_for_them_status_documents_say_why_they_list_no_apps(fleet, workdir):
    """The builder opens its read-only connection at its first document: with state.db moved
    away (the loop's own connection keeps its descriptors), it cannot, and every document
    says so until it can; proctord logs the failure once, and once when it is over."""
    mdm, key, daemon = fleet
    configure(daemon, mdm, interval=3600)
    daemon.start()
    database = os.path.join(daemon.state_dir, "state.db")
    os.rename(database, database + ".away")
    try:
        configure(daemon, mdm, interval=3600, status=f"StatusURL={mdm.url('report')}\nStatusIntervalSec=1\n")
        proctorctl(daemon, "reload", check=0)
        unread = wait_for_post(mdm, lambda d: "appsLeftOutReason" in d)
        assert unread["apps"] == [] and unread["appsLeftOut"] == unread["status"]["counts"]["appsKnown"] > 0
        assert unread["appsLeftOutReason"].startswith(f"the state database cannot be read: cannot open the state database {database}")
        deadline = time.monotonic() + 20
        while sum("appsLeftOutReason" in d for d in posts(mdm)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sum("appsLeftOutReason" in d for d in posts(mdm)) >= 3
    finally:
        os.rename(database + ".away", database)
    listed = wait_for_post(mdm, lambda d: d["apps"] and "appsLeftOutReason" not in d)
    assert listed["appsLeftOut"] == 0
    log = daemon.wait_for_log("Status documents list the apps again")
    assert log.count("while opening the state database for status documents") == 1, log
    assert "Status documents list the apps again" in log


def test_a_status_max_apps_out_of_range_stops_start_up_naming_the_line(fleet):
    mdm, key, daemon = fleet
    configure(daemon, mdm, status=f"StatusURL={mdm.url('report')}\nStatusMaxApps=lots\n")
    with pytest.raises(RuntimeError):
        daemon.start()
    assert daemon.process.wait(timeout=10) == 78
    assert "StatusMaxApps=: expected a whole number of apps from 0 to 1000000, found \"lots\"" in daemon.log()


def wait_for_delivery(daemon, predicate):
    """Status's `fleet.statusReports` once `predicate` holds for it."""
    def delivered(reply):
        return reply["fleet"].get("statusReports") and predicate(reply["fleet"]["statusReports"])
    return wait_for_result(daemon, delivered)["fleet"]["statusReports"]


def test_status_shows_how_delivering_status_reports_went(fleet, workdir):
    mdm, key, daemon = fleet
    mdm.publish(sign(key, base_policy("fleet.1"), workdir, serial=100))
    # A short StatusIntervalSec= also makes the retry after a failure come within a second or two.
    configure(daemon, mdm, interval=3600, status=f"StatusURL={mdm.url('report')}\nStatusIntervalSec=2\n")
    daemon.start()
    sent = wait_for_delivery(daemon, lambda d: d["reportsSent"] >= 1)
    assert sent["statusUrl"] == mdm.url("report")
    assert sent["lastReportResult"] == "sent" and sent["reportFailures"] == 0 and sent.get("lastReportError") is None
    # The MDM now answers 500: the next report (after the reload's refused fetch) fails.
    open(os.path.join(mdm.dir, "report-fails"), "w").close()
    mdm.publish(sign(key, base_policy("fleet.0"), workdir, serial=99))
    proctorctl(daemon, "reload", check=0)
    failed = wait_for_delivery(daemon, lambda d: d["reportFailures"] >= 1)
    assert failed["lastReportResult"] == "failed"
    assert failed["lastReportError"]["reason"] == "http-status"
    assert "HTTP 500" in failed["lastReportError"]["message"]
    assert failed["reportsSent"] >= sent["reportsSent"]
    text = proctorctl(daemon, "status", check=0).stdout
    assert f"reports to:   {mdm.url('report')}" in text
    assert "last failed:" in text and "http-status: the server answered HTTP 500" in text
    assert daemon.wait_for_log("Sending the status document to")
    # Delivered again once the MDM accepts reports; the last failure stays shown, with its time.
    os.remove(os.path.join(mdm.dir, "report-fails"))
    again = wait_for_delivery(daemon, lambda d: d["lastReportResult"] == "sent" and d["reportsSent"] > failed["reportsSent"])
    assert again["lastReportError"] == failed["lastReportError"]


def test_metrics_parse_as_prometheus_text_and_count_fleet_events(fleet, workdir):
    from prometheus_client.parser import text_string_to_metric_families
    mdm, key, daemon = fleet
    mdm.publish(sign(key, base_policy("fleet.1"), workdir, serial=100))
    configure(daemon, mdm, interval=3600)
    daemon.start()
    reply = wait_for_fetch(daemon, None)
    mdm.publish(sign(key, base_policy("fleet.0"), workdir, serial=99))
    proctorctl(daemon, "reload", check=0)
    next_fetch(daemon, reply)
    with varlink.Client(address="unix:" + daemon.agent) as client, client.open("io.proctor.Agent") as con:
        session = con.Register("io.proctor.test.notes")["session"]
        assert con.Decide(session, "print")["allowed"] is False
        with pytest.raises(varlink.VarlinkError):
            con.Register("com.example.not-in-policy")
    mdm.stop()
    proctorctl(daemon, "reload", check=0)
    failed = next_fetch(daemon, reply)
    assert failed["fleet"]["lastFetchResult"] == "failed"
    text = proctorctl(daemon, "metrics", check=0).stdout
    families = {family.name: family for family in text_string_to_metric_families(text)}
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for family in families.values() for s in family.samples}
    assert samples[("proctor_bundle_serial", ())] == 100
    assert samples[("proctor_bundles_refused_total", ())] == 1
    assert ("proctor_status_reports_total", (("result", "sent"),)) not in samples  # no StatusURL=
    assert samples[("proctor_bundle_fetch_failures_total", ())] == 1
    assert samples[("proctor_apps_known", ())] >= 4
    assert samples[("proctor_decisions_total", (("action", "print"), ("result", "denied")))] == 1
    assert samples[("proctor_decisions_total", (("action", "launch"), ("result", "allowed")))] == 1
    assert samples[("proctor_decisions_total", (("action", "clipboard.copy"), ("result", "allowed")))] == 0
    assert samples[("proctor_registrations_refused_total", (("reason", "unknown-app"),))] == 1
    assert samples[("proctor_registrations_refused_total", (("reason", "identity-mismatch"),))] == 0
    assert samples[("proctor_storage_failures_total", ())] == 0
    assert samples[("proctor_log_messages_dropped_total", ())] == 0
    assert samples[("proctor_events_dropped_total", ())] == 0
    assert samples[("proctor_sessions", ())] == 0
    assert families["proctor_decisions"].type == "counter" and families["proctor_bundle_serial"].type == "gauge"
    # The last fetch failed; the last successful one is the 304 or refusal before it.
    last = samples[("proctor_bundle_last_fetch_timestamp_seconds", ())]
    successful = samples[("proctor_bundle_last_successful_fetch_timestamp_seconds", ())]
    assert time.time() - 60 < successful <= last
    assert samples[("proctor_bundle_applied_timestamp_seconds", ())] <= successful
    assert samples[("proctor_policy_loaded_timestamp_seconds", (("version", "fleet.1"),))] > time.time() - 60


def test_the_signed_digest_is_the_documented_hash_list(workdir):
    """docs/fleet.md's formula, computed with Python's own BLAKE2b over what `proctorctl policy
    sign` wrote, is the header's `policyChunksBlake2b256`: the format is what the docs say."""
    import base64
    import hashlib
    key = os.path.join(workdir, "key")
    ctl("policy", "keygen", "--out", key)
    apps = {f"com.example.app{i}": {"state": "authorized", "dlp": {"print": "block"}} for i in range(10_000)}
    bundle = sign(key, {"schema": 1, "version": "large.1", "apps": apps}, workdir, serial=5)
    envelope_line, policy = bundle.split(b"\n", 1)
    envelope = json.loads(envelope_line)
    assert envelope["payloadType"] == "application/vnd.proctor.policy-bundle.v3+json"
    header = json.loads(base64.b64decode(envelope["payload"]))
    size = header["policyChunkSize"]
    assert size == 256 * 1024 and len(policy) > 2 * size and header["policySize"] == len(policy)

    def b(data):
        return hashlib.blake2b(data, digest_size=32)
    assert header["policyChunksBlake2b256"] == b(b"".join(b(policy[i:i + size]).digest()
                                                          for i in range(0, len(policy), size))).hexdigest()
    assert header["policyChunksBlake2b256"] != b(policy).hexdigest()


def test_a_pulled_bundle_of_several_chunks_applies_and_one_altered_chunk_is_refused(fleet, workdir):
    """proctord verifies a multi-chunk bundle (its chunks hashed on several threads, under its
    own limits) on the fetch thread; a byte changed in the second chunk is a bad signature."""
    mdm, key, daemon = fleet
    apps = {f"com.example.app{i}": {"state": "authorized", "dlp": {"print": "block"}} for i in range(5_000)}
    good = sign(key, base_policy("chunks.1", **apps), workdir, serial=100)
    policy_start = good.index(b"\n") + 1
    assert len(good) - policy_start > 256 * 1024, "at least two 256 KiB chunks"
    mdm.publish(good)
    configure(daemon, mdm, interval=3600)
    daemon.start()
    wait_for_fetch(daemon, None, timeout=60)
    # Applying 5 000 apps takes a moment after the fetch is reported.
    reply = wait_for_result(daemon, lambda r: r["fleet"].get("lastFetchResult") == "applied", timeout=60)
    assert reply["policy"]["version"] == "chunks.1"
    altered = bytearray(sign(key, base_policy("chunks.2", **apps), workdir, serial=101))
    offset = policy_start + 256 * 1024 + 100
    assert altered[offset:offset + 1] not in (b"\\", b'"')
    altered[offset] = ord("x") if altered[offset] != ord("x") else ord("y")
    mdm.publish(bytes(altered))
    proctorctl(daemon, "reload", check=0)
    next_fetch(daemon, reply)
    reply = wait_for_result(daemon, lambda r: (r["fleet"].get("lastError") or {}).get("reason") == "bad-signature",
                            timeout=60)
    assert reply["fleet"]["lastFetchResult"] == "refused", reply
    assert reply["policy"]["version"] == "chunks.1"


def test_credentials_in_the_urls_stay_out_of_logs_status_and_reports(fleet, workdir):
    """A URL's user information and query (where tokens and pre-signed signatures go) are sent
    to the server but never shown: not in the journal, Status, `proctorctl status`, nor the
    status document itself."""
    mdm, key, daemon = fleet
    secrets = ["bundle-user", "bundle-password", "bundle-token", "status-user", "status-password", "status-token"]
    bundle_url = f"https://bundle-user:bundle-password@localhost:{mdm.port}/bundle?token=bundle-token"
    status_url = f"https://status-user:status-password@localhost:{mdm.port}/report?token=status-token"
    configure(daemon, mdm, url=bundle_url, interval=3600, status=f"StatusURL={status_url}\nStatusIntervalSec=2\n")
    daemon.start()
    # The server knows neither path with a query: both requests fail, and failures are logged with their URL.
    reply = wait_for_result(daemon, lambda r: r["fleet"].get("lastFetchResult") == "failed"
                            and (r["fleet"].get("statusReports") or {}).get("reportFailures", 0) >= 1)
    requests = [request["path"] for request in json.loads(subprocess.run(
        ["curl", "-sf", "--cacert", f"{mdm.dir}/ca.pem", mdm.url("log")], capture_output=True, timeout=10).stdout)["requests"]]
    assert "/bundle?token=bundle-token" in requests and "/report?token=status-token" in requests
    assert reply["fleet"]["bundleUrl"] == f"https://<redacted>@localhost:{mdm.port}/bundle?<redacted>"
    assert reply["fleet"]["statusReports"]["statusUrl"] == f"https://<redacted>@localhost:{mdm.port}/report?<redacted>"
    daemon.wait_for_log("Sending the status document to")
    shown = [daemon.log(), json.dumps(reply), proctorctl(daemon, "status", check=0).stdout]
    # A report the server takes: its document says where reports go without the credentials either.
    configure(daemon, mdm, url=bundle_url, interval=3600,
              status=f"StatusURL=https://status-user:status-password@localhost:{mdm.port}/report\nStatusIntervalSec=2\n")
    proctorctl(daemon, "reload", check=0)
    shown.append(json.dumps(wait_for_post(mdm, lambda d: "statusReports" in d["status"]["fleet"])))
    for text in shown:
        for secret in secrets:
            assert secret not in text, (secret, text)


def test_mutual_tls_with_the_client_key_as_a_credential_and_an_exposed_key_file_refused(workdir, monkeypatch):
    """The MDM requires a client certificate. proctord gets its key as systemd would hand it
    over under DynamicUser= (LoadCredential=): a file in $CREDENTIALS_DIRECTORY named by
    ClientKey=@NAME. Without the credential, or with a key file others may read, it refuses to
    start (78) or to reload; without a client certificate the MDM refuses its polls."""
    mdm = MDM(workdir, "--require-client-certificate")
    key = os.path.join(workdir, "mdm-key")
    ctl("policy", "keygen", "--out", key)
    daemon = Daemon(workdir)
    try:
        write_policy(daemon.config_dir, base_policy("local.1"))
        os.makedirs(os.path.join(daemon.config_dir, "keys.d"))
        os.link(key + ".pub", os.path.join(daemon.config_dir, "keys.d", "mdm.pub"))
        mdm.publish(sign(key, base_policy("fleet.1"), workdir, serial=100))
        credentials = os.path.join(workdir, "credentials")
        os.makedirs(credentials, mode=0o700)
        for source, name in [("client.pem", "fleet-client.pem"), ("client.key", "fleet-client.key")]:
            shutil.copy(os.path.join(mdm.dir, source), os.path.join(credentials, name))
            os.chmod(os.path.join(credentials, name), 0o400)  # as systemd leaves a credential
        conf = os.path.join(daemon.config_dir, "proctord.conf")

        def configure_client(certificate, client_key):
            with open(conf, "w") as f:
                f.write(f"[Source]\nBundleURL={mdm.url()}\nPollIntervalSec=3600\nCACertificate={mdm.dir}/ca.pem\n")
                if certificate:
                    f.write(f"ClientCertificate={certificate}\nClientKey={client_key}\n")

        def refused_start(message):
            with pytest.raises(RuntimeError):
                daemon.start()
            assert daemon.stop() == 78
            assert message in daemon.log(), daemon.log()

        # Without a client certificate the MDM refuses the handshake: the poll fails, named.
        configure_client(None, None)
        daemon.start()
        failed = wait_for_fetch(daemon, None)["fleet"]
        assert failed["lastFetchResult"] == "failed", failed
        # In TLS 1.3 the client hears of the refusal after its side of the handshake: as the
        # server's alert ("tls") or, when the server closed first, as the send failing ("transfer").
        assert failed["lastError"]["reason"] in ("tls", "transfer"), failed["lastError"]
        assert status(daemon)["policy"]["version"] == "local.1"
        daemon.stop()

        # The key named as a credential but proctord started without $CREDENTIALS_DIRECTORY, then
        # with one that lacks it: each stops start-up with EX_CONFIG, saying what to add.
        configure_client("@fleet-client.pem", "@fleet-client.key")
        monkeypatch.delenv("CREDENTIALS_DIRECTORY", raising=False)
        refused_start(f"{conf}:5: ClientCertificate=: names the credential fleet-client.pem, but proctord was started "
                      "without $CREDENTIALS_DIRECTORY: add LoadCredential=fleet-client.pem:/etc/proctor/fleet-client.pem")
        os.rename(os.path.join(credentials, "fleet-client.key"), os.path.join(workdir, "set-aside.key"))
        monkeypatch.setenv("CREDENTIALS_DIRECTORY", credentials)
        refused_start(f"{conf}:6: ClientKey=: the credential fleet-client.key is not in $CREDENTIALS_DIRECTORY "
                      f"({credentials}): add LoadCredential=fleet-client.key:/etc/proctor/fleet-client.key")

        # With the credential the MDM accepts the client and the signed bundle is applied.
        os.rename(os.path.join(workdir, "set-aside.key"), os.path.join(credentials, "fleet-client.key"))
        daemon.start()
        applied = wait_for_fetch(daemon, None)
        assert applied["fleet"]["lastFetchResult"] == "applied", applied["fleet"]
        assert applied["policy"]["version"] == "fleet.1"
        daemon.stop()

        # A key file by path: accepted while only its owner may read it (as ssh demands); made
        # readable by others, a reload is refused and the settings in force stay, a start stops.
        key_file = os.path.join(workdir, "client.key")
        shutil.copy(os.path.join(mdm.dir, "client.key"), key_file)
        os.chmod(key_file, 0o600)
        configure_client(os.path.join(mdm.dir, "client.pem"), key_file)
        mdm.publish(sign(key, base_policy("fleet.2"), workdir, serial=101))
        daemon.start()
        assert wait_for_fetch(daemon, None)["policy"]["version"] == "fleet.2"
        os.chmod(key_file, 0o644)
        proctorctl(daemon, "reload", check=0)
        reply = status(daemon)
        assert reply["fleet"]["lastError"]["reason"] == "configuration", reply["fleet"]
        assert "a private key must not be accessible by group or others" in reply["fleet"]["lastError"]["message"]
        assert f"{conf}:6: ClientKey=: {key_file} has mode 644" in daemon.wait_for_log("Fleet settings not reloaded")
        assert reply["fleet"]["bundleUrl"] == mdm.url()
        daemon.stop()
        refused_start(f"{conf}:6: ClientKey=: {key_file} has mode 644: a private key must not be accessible by group "
                      f"or others (chmod 600 {key_file})")
    finally:
        daemon.stop()
        mdm.stop()
