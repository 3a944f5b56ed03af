"""The policy snapshot (state/policy.snapshot) through the real proctord: written after a
policy is in force, used by a restart on the same files, bundle and binary, and ignored —
the policy worked out from its JSON — when any of them changed or the file is damaged.

A snapshot that holds a planted hash with a valid checksum shows which path a start took:
the planted hash in force means the snapshot was read, the policy's own hash that it was
not."""
import hashlib
import os
import signal
import stat
import time

import pytest

from conftest import Daemon, base_policy, raw_call, write_policy

PLANTED = "0" * 64


def policy_sha256(daemon):
    reply = raw_call(daemon.admin, "io.proctor.Admin.GetPolicy")
    return reply["parameters"]["info"]["sha256"]


def snapshot_path(daemon):
    return os.path.join(daemon.state_dir, "policy.snapshot")


def read_fields(daemon):
    with open(snapshot_path(daemon), "rb") as f:
        lines = f.read().decode().split("\n")
    assert lines[-1] == "" and lines[0] == "proctor-policy-snapshot 1", lines
    return dict(line.split(" ", 1) for line in lines[1:-2])


def write_snapshot(daemon, fields):
    """A snapshot with `fields` and a valid checksum, replacing the daemon's."""
    body = "proctor-policy-snapshot 1\n" + "".join(f"{name} {fields[name]}\n"
                                                    for name in ("build", "files", "bundle", "sha256"))
    checksum = hashlib.sha256(body.encode()).hexdigest()
    with open(snapshot_path(daemon), "w") as f:
        f.write(body + f"checksum {checksum}\n")


def wait_for_snapshot(daemon, sha256, timeout=10):
    """The snapshot's fields once it names `sha256` (it is written off the loop)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            fields = read_fields(daemon)
        except (OSError, AssertionError, ValueError):
            fields = {}  # not written yet, or still the damaged one the test wrote
        if fields.get("sha256") == sha256:
            return fields
        time.sleep(0.02)
    raise AssertionError(f"no snapshot for {sha256}: {daemon.log()}")


@pytest.fixture
def settled(workdir):
    """A daemon whose policy.d is old enough to key a snapshot (PolicyDirectoryIdentity
    .settleSeconds), started once: its snapshot written, the policy's own hash known."""
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy("snap.1"))
    time.sleep(2.2)
    daemon.start()
    true_sha256 = policy_sha256(daemon)
    fields = wait_for_snapshot(daemon, true_sha256)
    try:
        yield daemon, true_sha256, fields
    finally:
        daemon.stop()


def restart(daemon):
    daemon.stop(signal.SIGTERM)
    return daemon.start()


def test_a_restart_reads_the_snapshot_written_after_the_start(settled):
    daemon, true_sha256, fields = settled
    assert fields["bundle"] == "none"
    assert len(fields["build"]) >= 16 and len(fields["files"]) == 64
    mode = os.stat(snapshot_path(daemon)).st_mode
    assert stat.S_IMODE(mode) == 0o600, oct(mode)
    # No temporary file of the atomic replacement is left beside it.
    assert [name for name in os.listdir(daemon.state_dir) if "policy.snapshot" in name] == ["policy.snapshot"]

    write_snapshot(daemon, dict(fields, sha256=PLANTED))
    restart(daemon)
    assert policy_sha256(daemon) == PLANTED, "the snapshot of the same files, bundle and build was not read"
    # Without the snapshot, the same files give the policy's own hash again.
    daemon.stop()
    os.unlink(snapshot_path(daemon))
    daemon.start()
    assert policy_sha256(daemon) == true_sha256
    wait_for_snapshot(daemon, true_sha256)


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "empty", "garbage"])
def test_a_damaged_snapshot_is_logged_and_the_policy_worked_out_again(settled, damage):
    daemon, true_sha256, fields = settled
    write_snapshot(daemon, dict(fields, sha256=PLANTED))
    with open(snapshot_path(daemon), "rb") as f:
        content = bytearray(f.read())
    if damage == "flipped byte":
        position = content.index(b"sha256 ") + 10
        content[position] ^= 0x01
    elif damage == "truncated":
        content = content[:len(content) - 20]
    elif damage == "empty":
        content = b""
    else:
        content = os.urandom(300)
    with open(snapshot_path(daemon), "wb") as f:
        f.write(content)
    restart(daemon)
    assert policy_sha256(daemon) == true_sha256
    log = daemon.wait_for_log("policy.snapshot is not used")
    assert "policy.snapshot is not used" in log, log
    # The start wrote a good one again.
    assert wait_for_snapshot(daemon, true_sha256)["files"] == fields["files"]


def test_another_build_of_proctord_does_not_use_the_snapshot(settled):
    daemon, true_sha256, fields = settled
    other_build = "f" * len(fields["build"]) if fields["build"] != "f" * len(fields["build"]) else "e" * len(fields["build"])
    write_snapshot(daemon, dict(fields, build=other_build, sha256=PLANTED))
    restart(daemon)
    assert policy_sha256(daemon) == true_sha256
    assert "is not used" not in daemon.log()  # a key that differs is not damage
    assert wait_for_snapshot(daemon, true_sha256)["build"] == fields["build"]


def test_a_changed_policy_file_does_not_use_the_snapshot(settled):
    daemon, true_sha256, fields = settled
    write_snapshot(daemon, dict(fields, sha256=PLANTED))
    daemon.stop()
    # Same content, same size: only the file's times and maybe its inode say it was written.
    write_policy(daemon.config_dir, base_policy("snap.1"))
    daemon.start()
    assert policy_sha256(daemon) == true_sha256
    # A file written a moment ago cannot key a snapshot: none was written for it.
    time.sleep(0.3)
    assert read_fields(daemon)["sha256"] == PLANTED


def test_an_added_policy_file_does_not_use_the_snapshot(settled):
    daemon, true_sha256, fields = settled
    write_snapshot(daemon, dict(fields, sha256=PLANTED))
    daemon.stop()
    write_policy(daemon.config_dir, {"schema": 1, "version": "snap.1", "apps": {}}, name="90-more.json")
    daemon.start()
    # The same policy merged from two files: its own hash, worked out again.
    assert policy_sha256(daemon) == true_sha256


def test_an_applied_bundle_keys_the_snapshot(settled):
    daemon, true_sha256, fields = settled
    reply = raw_call(daemon.admin, "io.proctor.Admin.ApplyPolicy", {"policy": base_policy("snap.2")})
    applied = reply["parameters"]["sha256"]
    assert applied != true_sha256
    with_bundle = wait_for_snapshot(daemon, applied)
    row, bundle_sha256 = with_bundle["bundle"].split(" ")
    assert int(row) >= 1 and len(bundle_sha256) == 64
    assert with_bundle["files"] == fields["files"]

    restart(daemon)
    assert policy_sha256(daemon) == applied
    # The snapshot of the policy.d alone does not stand for policy.d under the bundle.
    write_snapshot(daemon, dict(fields, sha256=PLANTED))
    restart(daemon)
    assert policy_sha256(daemon) == applied
    wait_for_snapshot(daemon, applied)  # written again off the loop: not over the next plant
    write_snapshot(daemon, dict(with_bundle, sha256=PLANTED))
    restart(daemon)
    assert policy_sha256(daemon) == PLANTED


def test_a_temporary_file_left_by_a_killed_writer_is_removed(settled):
    daemon, true_sha256, fields = settled
    # What a proctord killed between creating and renaming its replacement leaves behind
    # (every pid is below 1 << 22, the kernel's PID_MAX_LIMIT, so no process has this one).
    abandoned = os.path.join(daemon.state_dir, f".tmp.{1 << 22}.1f.policy.snapshot")
    with open(abandoned, "w") as f:
        f.write("proctor-policy-snapshot 1\n")
    raw_call(daemon.admin, "io.proctor.Admin.ApplyPolicy", {"policy": base_policy("snap.3")})
    deadline = time.monotonic() + 10
    while os.path.exists(abandoned) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not os.path.exists(abandoned)
