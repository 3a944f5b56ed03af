"""proctord signs every app view it sends (issue #12 §2), so ProctorKit can launch an app
offline from a cached copy. Checked here with independent tools: the Python `varlink` client
for the calls, the `openssl` command line for the Ed25519 signature."""

import base64
import hashlib
import json
import os
import stat
import subprocess

import pytest
import varlink

from conftest import Daemon, base_policy, write_policy

# DER SubjectPublicKeyInfo header of an Ed25519 public key (RFC 8410): the 32 key bytes follow.
ED25519_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


def agent(daemon):
    return varlink.Client(address=f"unix:{daemon.agent}")


def openssl_verifies(workdir, key_text, payload, signature):
    """Whether openssl accepts `signature` (bytes) of `payload` (bytes) by the key in its text form."""
    algorithm, _key_id, key = key_text.split()
    assert algorithm == "ed25519"
    paths = {name: os.path.join(workdir, name) for name in ("key.der", "payload", "sig")}
    with open(paths["key.der"], "wb") as f:
        f.write(ED25519_SPKI_PREFIX + base64.b64decode(key))
    with open(paths["payload"], "wb") as f:
        f.write(payload)
    with open(paths["sig"], "wb") as f:
        f.write(signature)
    result = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", paths["key.der"], "-keyform", "DER",
                             "-rawin", "-in", paths["payload"], "-sigfile", paths["sig"]], capture_output=True, text=True)
    return result.returncode == 0


def test_get_info_serves_the_key_written_beside_the_sockets(daemon):
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        served = con.GetInfo()["viewSigningKey"]
    path = os.path.join(daemon.runtime_dir, "view-signing-key.pub")
    with open(path) as f:
        assert f.read() == served + "\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    # The private half stays in the state directory, readable by proctord alone.
    private = os.path.join(daemon.state_dir, "view-signing-key")
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
    with open(private) as f:
        assert served.split()[1] in f.read()


def test_register_and_subscribe_replies_carry_views_signed_for_the_app_and_user(daemon, workdir):
    with agent(daemon) as client, client.open("io.proctor.Agent") as con:
        key = con.GetInfo()["viewSigningKey"]
        reply = con.Register("io.proctor.test.notes", "1.2.0")
    view = reply["view"]
    payload = view["payload"].encode()
    assert openssl_verifies(workdir, key, payload, base64.b64decode(view["signature"]))
    assert not openssl_verifies(workdir, key, payload.replace(b"notes.example.com", b"notes.example.org"),
                                base64.b64decode(view["signature"]))
    content = json.loads(payload)
    assert content["appId"] == "io.proctor.test.notes"
    assert content["uid"] == os.geteuid()
    assert content["state"] == "authorized" and content["policyVersion"] == "test.1"
    assert content["config"] == reply["config"] and content["compliance"] == reply["compliance"]
    assert content["directives"] == []
    managed = json.dumps(reply["managedApps"], separators=(",", ":")).encode()
    assert content["managedAppsSHA256"] == hashlib.sha256(managed).hexdigest()


def test_the_key_survives_a_restart(workdir):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    daemon.start()
    try:
        with agent(daemon) as client, client.open("io.proctor.Agent") as con:
            first = con.GetInfo()["viewSigningKey"]
        daemon.stop()
        os.unlink(os.path.join(daemon.runtime_dir, "view-signing-key.pub"))
        daemon.start()
        with agent(daemon) as client, client.open("io.proctor.Agent") as con:
            assert con.GetInfo()["viewSigningKey"] == first
        with open(os.path.join(daemon.runtime_dir, "view-signing-key.pub")) as f:
            assert f.read() == first + "\n"
    finally:
        daemon.stop()


def test_a_group_readable_private_key_stops_start_up(workdir):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    daemon.start()
    daemon.stop()
    os.chmod(os.path.join(daemon.state_dir, "view-signing-key"), 0o640)
    daemon.start(wait_ready=False)
    assert daemon.process.wait(timeout=20) != 0
    assert "cannot load or create the view-signing key" in daemon.log()
