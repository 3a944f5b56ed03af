"""The data keys proctord holds for each app and user (issue 13 §2–3), against the real
proctord: who may obtain a key, that it survives a restart without ever being on disk in
the clear, and that a wipe or retirement destroys it durably (crypto-shredding)."""
import base64
import glob
import json
import os
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess

import pytest

from conftest import Daemon, base_policy, proctorctl, this_executable, write_policy
from varlink_raw import exchange

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent_register.py")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
NOTES = "io.proctor.test.notes"


class AppConnection:
    """One Agent connection registered as an app (this test process)."""

    def __init__(self, daemon, app_id, version=None, timeout=10):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.settimeout(timeout)
        self.socket.connect(daemon.agent)
        parameters = {"appId": app_id}
        if version:
            parameters["version"] = version
        reply = exchange(self.socket, "io.proctor.Agent.Register", parameters)
        assert "error" not in reply, reply
        self.session = reply["parameters"]["session"]

    def data_key(self, session=None):
        return exchange(self.socket, "io.proctor.Agent.GetDataKey", {"session": session or self.session})

    def close(self):
        self.socket.close()


def data_key(daemon, app_id=NOTES, version=None, timeout=10):
    app = AppConnection(daemon, app_id, version, timeout)
    try:
        return app.data_key()
    finally:
        app.close()


def started(workdir, **apps):
    """The real proctord on `workdir` with the test policy (and `apps` in it)."""
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy(**apps))
    return daemon.start()


def key_bytes(reply):
    assert "error" not in reply, reply
    key = base64.b64decode(reply["parameters"]["key"], validate=True)
    assert len(key) == 32
    return key


def on_disk(daemon, needle):
    """Whether `needle` (bytes) is in any file of the state directory."""
    for path in glob.glob(os.path.join(daemon.state_dir, "*")):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                if needle in f.read():
                    return True
    return False


def wrapped_hex(daemon, generation):
    with sqlite3.connect(f"file:{os.path.join(daemon.state_dir, 'state.db')}?mode=ro", uri=True) as db:
        row = db.execute("SELECT wrapped FROM data_keys WHERE app_id = ? AND generation = ?", (NOTES, generation)).fetchone()
    return row[0] if row else None


def test_the_key_is_created_once_kept_wrapped_and_survives_a_restart(workdir):
    daemon = started(workdir)
    try:
        machine_key = os.path.join(daemon.state_dir, "machine-key")
        mode = os.stat(machine_key).st_mode
        assert stat.S_IMODE(mode) == 0o600 and os.path.getsize(machine_key) == 32
        assert "Machine key loaded from a new key file" in daemon.wait_for_log("Machine key loaded")

        first = data_key(daemon)
        key = key_bytes(first)
        assert first["parameters"]["generation"] == 1
        assert len(first["parameters"]["keyId"]) == 16
        # The same key for the same app and user, on any connection.
        assert key_bytes(data_key(daemon)) == key
        wrapped = wrapped_hex(daemon, 1)
        assert wrapped and len(wrapped) == 2 * 73, "stored wrapped: version, nonce, ciphertext, tag"
        assert not on_disk(daemon, key) and not on_disk(daemon, key.hex().encode()), "the key is never on disk in the clear"
        assert first["parameters"]["key"] not in daemon.log(), "the key is never logged"
    finally:
        daemon.stop()

    daemon.start()
    try:
        # The log file is appended to across restarts: wait for this start's own line.
        assert "Machine key loaded from the key file" in daemon.wait_for_log("Machine key loaded from the key file")
        again = data_key(daemon)
        assert key_bytes(again) == key and again["parameters"]["generation"] == 1
        # proctorctl shows the key's state, never the key.
        shown = proctorctl(daemon, "app", NOTES, check=0).stdout
        assert "data keys" in shown and "1 live, 0 destroyed" in shown, shown
        assert first["parameters"]["keyId"] in shown
        as_json = proctorctl(daemon, "app", NOTES, "--json", check=0).stdout
        [state] = json.loads(as_json)["app"]["dataKeys"]
        assert state["uid"] == os.getuid() and state["generation"] == 1 and "destroyedAt" not in state
        assert "lastReleasedAt" in state and "createdAt" in state
        for text in (shown, as_json):
            assert again["parameters"]["key"] not in text and key.hex() not in text
    finally:
        daemon.stop()


def test_a_wipe_destroys_the_key_durably_before_answering_and_the_next_key_is_new(workdir):
    daemon = started(workdir)
    try:
        key = key_bytes(data_key(daemon))
        wrapped = wrapped_hex(daemon, 1).encode()
        assert on_disk(daemon, wrapped)
        proctorctl(daemon, "wipe", NOTES, check=0)
        # Answered: the wrapped key is gone from the database and its write-ahead log.
        assert wrapped_hex(daemon, 1) is None
        assert not on_disk(daemon, wrapped), "the wrapped key must not survive in any state file"
        assert "Destroyed 1 data key(s) of io.proctor.test.notes: wiped by uid" in daemon.wait_for_log("Destroyed")
    finally:
        # Across a crash too: the destruction was committed before the answer.
        daemon.stop(signal.SIGKILL)

    daemon.start()
    try:
        detail = json.loads(proctorctl(daemon, "app", NOTES, "--json", check=0).stdout)["app"]
        [destroyed] = detail["dataKeys"]
        assert destroyed["generation"] == 1 and "destroyedAt" in destroyed
        rotated = data_key(daemon)
        assert rotated["parameters"]["generation"] == 2
        assert key_bytes(rotated) != key
        shown = proctorctl(daemon, "app", NOTES, check=0).stdout
        assert "1 live, 1 destroyed" in shown, shown
    finally:
        daemon.stop()


def test_retirement_destroys_the_key_and_a_blocked_or_noncompliant_app_gets_none(workdir):
    apps = {NOTES: {"state": "authorized", "match": {"executable": this_executable(), "users": ["*"]},
                    "compliance": {"minVersion": "2.0.0", "onViolation": "block"}}}
    daemon = started(workdir, **apps)
    try:
        old = data_key(daemon, version="1.0.0")
        assert old["error"] == "io.proctor.Agent.AppBlocked", old
        assert old["parameters"]["state"] == "authorized" and "compliance.minVersion" in old["parameters"]["reason"]
        key_bytes(data_key(daemon, version="2.1.0"))
        blocked = data_key(daemon, "io.proctor.test.blocked")
        assert blocked["error"] == "io.proctor.Agent.AppBlocked" and blocked["parameters"]["state"] == "blocked"

        apps[NOTES]["state"] = "retired"
        write_policy(daemon.config_dir, base_policy(version="test.2", **apps))
        proctorctl(daemon, "reload", check=0)
        assert "Destroyed 1 data key(s) of io.proctor.test.notes: retired by policy test.2" in daemon.wait_for_log("Destroyed")
        assert wrapped_hex(daemon, 1) is None
        retired = data_key(daemon, version="2.1.0")
        assert retired["error"] == "io.proctor.Agent.AppBlocked" and retired["parameters"]["state"] == "retired"

        # Authorized again: a new key. Retired while proctord is stopped: destroyed at its start.
        apps[NOTES]["state"] = "authorized"
        write_policy(daemon.config_dir, base_policy(version="test.3", **apps))
        proctorctl(daemon, "reload", check=0)
        assert data_key(daemon, version="2.1.0")["parameters"]["generation"] == 2
        daemon.stop()
        apps[NOTES]["state"] = "retired"
        write_policy(daemon.config_dir, base_policy(version="test.4", **apps))
        daemon.start()
        assert "Destroyed 1 data key(s) of io.proctor.test.notes: retired by policy test.4" in daemon.wait_for_log("retired by policy test.4")
        assert wrapped_hex(daemon, 2) is None
    finally:
        daemon.stop()


def open_reader(daemon):
    """A read transaction of another process, its snapshot taken: it keeps a checkpoint from
    copying the write-ahead log into state.db and emptying it."""
    reader = sqlite3.connect(f"file:{os.path.join(daemon.state_dir, 'state.db')}?mode=ro", uri=True,
                             isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT COUNT(*) FROM data_keys").fetchone()[0] >= 1  # the snapshot is taken
    return reader


def open_writer(daemon):
    """A write transaction of another process: every write of proctord fails with `busy`
    after its busy timeout (5 s)."""
    writer = sqlite3.connect(os.path.join(daemon.state_dir, "state.db"), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    return writer


def retired_while_held(workdir, hold):
    """proctord whose policy retires the app while `hold(daemon)` (another process's reader or
    writer of state.db) makes the retirement's shred fail. The daemon, its policy's apps, the
    wrapped key's hex and the holder, still holding."""
    apps = {NOTES: {"state": "authorized", "match": {"executable": this_executable(), "users": ["*"]}}}
    daemon = started(workdir, **apps)
    holder = None
    try:
        key_bytes(data_key(daemon, version="2.1.0"))
        wrapped = wrapped_hex(daemon, 1).encode()
        holder = hold(daemon)
        apps[NOTES]["state"] = "retired"
        write_policy(daemon.config_dir, base_policy(version="test.2", **apps))
        proctorctl(daemon, "reload", check=0)
        failed = "(retired by policy test.2); tried again in the background"
        assert failed in daemon.wait_for_log(failed, timeout=20)
        return daemon, apps, wrapped, holder
    except BaseException:
        if holder:
            holder.close()
        daemon.stop()
        raise


def test_a_retirement_shred_a_reader_held_back_is_finished_by_a_retry(workdir):
    """A read transaction holding a snapshot older than the shred keeps its checkpoint from
    emptying the write-ahead log: the shred fails (the key destroyed, its bytes still on disk),
    and proctord tries again on its own until the erasure completes — without destroying the
    key the app obtained since."""
    daemon, apps, wrapped, reader = retired_while_held(workdir, open_reader)
    try:
        assert "State storage failed while destroying the data keys of" in daemon.wait_for_log("the wipe is not complete")
        assert wrapped_hex(daemon, 1) is None and on_disk(daemon, wrapped)  # destroyed, not yet erased
        # Authorized again meanwhile, the app gets generation 2: the retry only finishes erasing.
        apps[NOTES]["state"] = "authorized"
        write_policy(daemon.config_dir, base_policy(version="test.3", **apps))
        proctorctl(daemon, "reload", check=0)
        assert data_key(daemon, version="2.1.0")["parameters"]["generation"] == 2

        reader.execute("COMMIT")
        reader.close()
        reader = None
        finished = "Finished erasing the data keys of io.proctor.test.notes (retired by policy test.2) at retry"
        assert finished in daemon.wait_for_log(finished, timeout=30)
        assert not on_disk(daemon, wrapped)
        assert wrapped_hex(daemon, 2) is not None
    finally:
        if reader:
            reader.close()
        daemon.stop()


def test_a_key_destroyed_before_a_crash_is_erased_from_the_log_at_the_next_start(workdir):
    """A retirement's shred that a reader held back destroyed the key, its old bytes still in
    state.db and the write-ahead log. proctord killed before its retry: SQLite reads the log
    it left at the next open but leaves it as it is, so the start must finish the erasure —
    before it serves anything — and say so."""
    daemon, _, wrapped, reader = retired_while_held(workdir, open_reader)
    daemon.stop(signal.SIGKILL)
    reader.close()
    assert on_disk(daemon, wrapped), "the crash left no bytes of the key: this test proves nothing"
    assert wrapped_hex(daemon, 1) is None  # destroyed for every purpose but the bytes

    daemon.start()
    try:
        assert not on_disk(daemon, wrapped), "the key's old bytes survived the restart"
        finished = "Finished erasing the destroyed data keys of every app"
        assert finished in daemon.wait_for_log(finished)
        assert "Finishing 1 shred(s) the last run left unfinished" in daemon.log()
        assert data_key(daemon, version="2.1.0")["error"] == "io.proctor.Agent.AppBlocked"
    finally:
        daemon.stop()


def test_a_retirements_shred_whose_write_failed_before_a_crash_is_done_at_the_next_start(workdir):
    """The retirement's write failed (another process held the database's write lock), so the
    key is alive; proctord killed before its retry. Nothing records it: the next start
    destroys the keys of every app the policy retires, this one's with them."""
    daemon, _, wrapped, writer = retired_while_held(workdir, open_writer)
    daemon.stop(signal.SIGKILL)
    writer.close()
    assert wrapped_hex(daemon, 1) is not None

    daemon.start()
    try:
        assert wrapped_hex(daemon, 1) is None and not on_disk(daemon, wrapped)
        destroyed = "Destroyed 1 data key(s) of io.proctor.test.notes: retired by policy test.2"
        assert destroyed in daemon.wait_for_log(destroyed)
    finally:
        daemon.stop()


def test_a_compliance_violation_with_onviolation_wipe_destroys_that_users_key(workdir):
    """Issue 13 §3: `onViolation: wipe` shreds the key in proctord, at launch and while the app
    runs — only the key of the user whose session runs the violating version."""
    apps = {NOTES: {"state": "authorized", "match": {"executable": this_executable(), "users": ["*"]},
                    "compliance": {"minVersion": "2.0.0", "onViolation": "wipe"}}}
    daemon = started(workdir, **apps)
    try:
        key_bytes(data_key(daemon, version="2.1.0"))
        assert wrapped_hex(daemon, 1) is not None
        # At launch: an old version registers, and the key is gone before Register answers.
        AppConnection(daemon, NOTES, version="1.0.0").close()
        assert wrapped_hex(daemon, 1) is None
        assert "compliance violation of version 1.0.0" in daemon.wait_for_log("Destroyed 1 data key(s)")

        # While running: a compliant, subscribed session loses its user's key when minVersion rises.
        app = AppConnection(daemon, NOTES, version="2.1.0")
        try:
            assert key_bytes(app.data_key()) and wrapped_hex(daemon, 2) is not None
            assert "error" not in exchange(app.socket, "io.proctor.Agent.Subscribe", {"session": app.session}, more=True)
            apps[NOTES]["compliance"]["minVersion"] = "3.0.0"
            write_policy(daemon.config_dir, base_policy(version="test.2", **apps))
            proctorctl(daemon, "reload", check=0)
            assert "compliance violation of version 2.1.0" in daemon.wait_for_log("compliance violation of version 2.1.0")
            assert wrapped_hex(daemon, 2) is None
        finally:
            app.close()
    finally:
        daemon.stop()


def test_a_violations_shred_that_failed_keeps_the_key_from_the_app_until_a_retry_destroys_it(workdir):
    """A compliance violation's shred whose write failed (another process held the database's
    write lock) left the key alive, to be destroyed by a retry. An update to a compliant version
    meanwhile must not obtain that key: the retry would destroy it under the app, with whatever
    it protected since. The app gets a new generation once the retry is done."""
    apps = {NOTES: {"state": "authorized", "match": {"executable": this_executable(), "users": ["*"]},
                    "compliance": {"minVersion": "2.0.0", "onViolation": "wipe"}}}
    daemon = started(workdir, **apps)
    writer = None
    try:
        key_bytes(data_key(daemon, version="2.1.0"))
        writer = sqlite3.connect(os.path.join(daemon.state_dir, "state.db"), isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")  # every write of proctord fails with `busy` after its timeout (5 s)
        AppConnection(daemon, NOTES, version="1.0.0", timeout=30).close()
        assert "compliance violation of version 1.0.0" in daemon.wait_for_log("tried again in the background", timeout=20)
        assert wrapped_hex(daemon, 1) is not None  # not destroyed: the retry will

        refused = data_key(daemon, version="2.1.0", timeout=60)  # its registration waits for the lock too
        assert refused.get("error") == "io.proctor.Agent.DataKeyUnavailable", refused

        writer.execute("COMMIT")
        writer.close()
        writer = None
        daemon.wait_for_log("Finished erasing the data keys of io.proctor.test.notes (compliance violation", timeout=60)
        assert wrapped_hex(daemon, 1) is None
        assert data_key(daemon, version="2.1.0")["parameters"]["generation"] == 2
    finally:
        if writer:
            writer.close()
        daemon.stop()


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM])
def test_a_violations_shred_whose_write_failed_is_done_at_the_next_start(workdir, stop):
    """The compliance violation's write failed (another process held the database's write
    lock), and proctord stopped — killed, or cleanly — before a retry destroyed the key. The
    state holds nothing else that says the key is condemned: the shred is recorded in the
    state directory (`pending-shreds`), and the next start does it before serving, so a
    version compliant again gets a new key, never the condemned one."""
    apps = {NOTES: {"state": "authorized", "match": {"executable": this_executable(), "users": ["*"]},
                    "compliance": {"minVersion": "2.0.0", "onViolation": "wipe"}}}
    daemon = started(workdir, **apps)
    pending = os.path.join(daemon.state_dir, "pending-shreds")
    writer = None
    try:
        key_bytes(data_key(daemon, version="2.1.0"))
        wrapped = wrapped_hex(daemon, 1).encode()
        writer = open_writer(daemon)
        AppConnection(daemon, NOTES, version="1.0.0", timeout=30).close()
        assert "compliance violation of version 1.0.0" in daemon.wait_for_log("tried again in the background", timeout=20)
        with open(pending) as f:
            assert json.load(f) == {"violationShreds": [{"appId": NOTES, "uid": os.getuid(), "appVersion": "1.0.0",
                                                         "throughGeneration": 1}]}
        assert stat.S_IMODE(os.stat(pending).st_mode) == 0o600
        daemon.stop(stop)
        writer.execute("COMMIT")
        writer.close()
        writer = None
        assert wrapped_hex(daemon, 1) is not None

        daemon.start()
        assert wrapped_hex(daemon, 1) is None and not on_disk(daemon, wrapped)
        log = daemon.wait_for_log("Finished erasing the data keys of io.proctor.test.notes")
        assert (f"Finishing 1 shred(s) the last run left unfinished: the data keys of {NOTES} "
                "(compliance violation of version 1.0.0: onViolation is wipe)") in log
        assert "Destroyed 1 data key(s) of io.proctor.test.notes: compliance violation of version 1.0.0" in log
        assert not os.path.exists(pending)
        assert data_key(daemon, version="2.1.0")["parameters"]["generation"] == 2
    finally:
        if writer:
            writer.close()
        daemon.stop()


def test_a_session_of_another_connection_app_executable_or_user_cannot_obtain_the_key(workdir):
    daemon = started(workdir)
    try:
        app = AppConnection(daemon, NOTES)
        key = key_bytes(app.data_key())
        # A session id is worthless on another connection.
        thief = AppConnection(daemon, "io.proctor.test.mail")
        stolen = thief.data_key(session=app.session)
        assert stolen["error"] == "io.proctor.Agent.InvalidSession", stolen
        # Another app's session gets that app's key, never this one.
        assert key_bytes(thief.data_key()) != key
        thief.close()
        app.close()
        # Another executable cannot register as the app at all, so it has no session to ask with.
        other = subprocess.run(["/usr/bin/python3", "-S", CLIENT, daemon.agent, "io.proctor.test.other-exe", "--data-key"],
                               capture_output=True, text=True, timeout=30)
        assert other.stdout.strip() == "io.proctor.Agent.IdentityMismatch", other

        if os.geteuid() != 0:
            pytest.skip("running as another user needs root")
        client = os.path.join(workdir, "agent_register.py")
        shutil.copy(CLIENT, client)
        os.chmod(client, 0o644)
        os.chmod(daemon.runtime_dir, 0o755)
        # Another user registered as the same app gets its own key, not this user's.
        nobody = subprocess.run(NOBODY + [this_executable(), client, daemon.agent, NOTES, "--data-key"],
                                capture_output=True, text=True, timeout=30)
        lines = nobody.stdout.strip().split("\n")
        assert lines[0] == "registered", nobody
        their_key = base64.b64decode(json.loads(lines[1])["key"])
        assert len(their_key) == 32 and their_key != key
        # A user the app's `match` excludes cannot register, hence gets no key.
        refused = subprocess.run(NOBODY + [this_executable(), client, daemon.agent, "io.proctor.test.mail", "--data-key"],
                                 capture_output=True, text=True, timeout=30)
        assert refused.stdout.strip() == "io.proctor.Agent.IdentityMismatch", refused
        states = json.loads(proctorctl(daemon, "app", NOTES, "--json", check=0).stdout)["app"]["dataKeys"]
        assert sorted(state["uid"] for state in states) == sorted([os.getuid(), 65534])
    finally:
        daemon.stop()


def test_the_machine_key_comes_from_the_systemd_credential_when_one_is_handed_over(workdir, monkeypatch):
    """What systemd does for LoadCredentialEncrypted=machine-key: the decrypted key in a
    0400 file `machine-key` of $CREDENTIALS_DIRECTORY (docs/crypto.md)."""
    credentials = os.path.join(workdir, "credentials")
    os.makedirs(credentials, mode=0o700)
    credential = os.path.join(credentials, "machine-key")
    with open(credential, "wb") as f:
        f.write(os.urandom(32))
    os.chmod(credential, 0o400)
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", credentials)
    daemon = started(workdir)
    try:
        assert f"Machine key loaded from the systemd credential {credential}" in daemon.wait_for_log("Machine key loaded")
        assert not os.path.exists(os.path.join(daemon.state_dir, "machine-key")), "no key file beside a credential"
        key = key_bytes(data_key(daemon))
    finally:
        daemon.stop()

    # Another machine key (the credential replaced): the stored key no longer unwraps, and
    # proctord says so rather than handing out another key.
    os.chmod(credential, 0o600)
    with open(credential, "wb") as f:
        f.write(os.urandom(32))
    daemon.start()
    try:
        refused = data_key(daemon)
        assert refused["error"] == "io.proctor.Agent.DataKeyUnavailable", refused
        assert "does not unwrap with this machine key" in refused["parameters"]["reason"]
        assert key.hex() not in daemon.log()
    finally:
        daemon.stop()

    # A credential anyone else may read, or of the wrong size, stops start-up with the reason.
    for mode, contents, reason in [(0o644, os.urandom(32), "must not be readable by others (mode 644, expected 600)"),
                                   (0o600, os.urandom(31), "expected exactly 32 raw bytes, found 31")]:
        with open(credential, "wb") as f:
            f.write(contents)
        os.chmod(credential, mode)
        earlier = len(daemon.log())
        daemon.start(wait_ready=False)
        assert daemon.process.wait(timeout=20) == 1
        log = daemon.log()[earlier:]
        assert f"cannot read the machine key credential: {credential}" in log and reason in log, log
