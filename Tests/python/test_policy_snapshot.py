"""The policy snapshot (state/policy.snapshot) through the real proctord: written after a
policy is in force, used by a restart on the same files, bundle and binary, and ignored —
the policy worked out from its JSON — when any of them changed or the file is damaged.

Format 2 is a text header (the key, the policy's sha256, the body's length and XXH64, and
a checksum over those lines) and a binary body: the compiled policy. A snapshot whose header
holds a planted hash with a valid checksum shows which path a start took: the planted hash in
force means the snapshot was read (and the policy came from its body), the policy's own hash
that it was not."""
import hashlib
import json
import os
import signal
import stat
import struct
import time

import pytest

from conftest import Daemon, base_policy, raw_call, write_policy

PLANTED = "0" * 64
FORMAT = "proctor-policy-snapshot 2"
HEADER_LINES = 7


def policy_sha256(daemon):
    reply = raw_call(daemon.admin, "io.proctor.Admin.GetPolicy")
    return reply["parameters"]["info"]["sha256"]


def policy_in_force(daemon):
    return raw_call(daemon.admin, "io.proctor.Admin.GetPolicy")["parameters"]["policy"]


def snapshot_path(daemon):
    return os.path.join(daemon.state_dir, "policy.snapshot")


def split(content):
    """The header's lines (without the checksum line) and the body."""
    lines = content.split(b"\n", HEADER_LINES)
    assert len(lines) == HEADER_LINES + 1, "no complete header"
    return [line.decode() for line in lines[:HEADER_LINES - 1]], lines[HEADER_LINES]


def read_fields(daemon):
    """The header's fields, and the body under the key "body bytes"."""
    with open(snapshot_path(daemon), "rb") as f:
        lines, body = split(f.read())
    assert lines[0] == FORMAT, lines
    fields = dict(line.split(" ", 1) for line in lines[1:])
    fields["body bytes"] = body
    return fields


def write_snapshot(daemon, fields, body=None):
    """A snapshot with `fields` and `body` (the one `fields` came with unless given), its
    header's checksum and body line valid, replacing the daemon's."""
    body = fields["body bytes"] if body is None else body
    header = FORMAT + "\n" + "".join(f"{name} {fields[name]}\n" for name in ("build", "files", "bundle", "sha256"))
    header += f"body {len(body)} {xxh64(body):016x}\n"
    checksum = hashlib.sha256(header.encode()).hexdigest()
    with open(snapshot_path(daemon), "wb") as f:
        f.write(header.encode() + f"checksum {checksum}\n".encode() + body)


MASK = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                      0x27D4EB2F165667C5)


def xxh64(data):
    """XXH64 with seed 0 (the reference algorithm, written out: no module of it is installed)."""
    def rotate(value, bits):
        return ((value << bits) | (value >> (64 - bits))) & MASK

    def round_(accumulator, word):
        return rotate((accumulator + word * P2) & MASK, 31) * P1 & MASK

    def word(at, size=8):
        return int.from_bytes(data[at:at + size], "little")

    length, offset = len(data), 0
    if length >= 32:
        lanes = [(P1 + P2) & MASK, P2, 0, (-P1) & MASK]
        while offset + 32 <= length:
            lanes = [round_(lane, word(offset + 8 * index)) for index, lane in enumerate(lanes)]
            offset += 32
        h = (rotate(lanes[0], 1) + rotate(lanes[1], 7) + rotate(lanes[2], 12) + rotate(lanes[3], 18)) & MASK
        for lane in lanes:
            h = ((h ^ round_(0, lane)) * P1 + P4) & MASK
    else:
        h = P5
    h = (h + length) & MASK
    while offset + 8 <= length:
        h = (rotate(h ^ round_(0, word(offset)), 27) * P1 + P4) & MASK
        offset += 8
    if offset + 4 <= length:
        h = (rotate(h ^ (word(offset, 4) * P1 & MASK), 23) * P2 + P3) & MASK
        offset += 4
    while offset < length:
        h = rotate(h ^ (data[offset] * P5 & MASK), 11) * P1 & MASK
        offset += 1
    h = (h ^ (h >> 33)) * P2 & MASK
    h = (h ^ (h >> 29)) * P3 & MASK
    return h ^ (h >> 32)


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

    assert xxh64(b"Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1
    assert int(fields["body"].split(" ")[0]) == len(fields["body bytes"]) > 1000  # the compiled policy
    written = policy_in_force(daemon)

    write_snapshot(daemon, dict(fields, sha256=PLANTED))
    restart(daemon)
    assert policy_sha256(daemon) == PLANTED, "the snapshot of the same files, bundle and build was not read"
    # The policy restored from the body is the one compiled from the JSON.
    assert policy_in_force(daemon) == written
    assert "is not used" not in daemon.log()
    # Without the snapshot, the same files give the policy's own hash again.
    daemon.stop()
    os.unlink(snapshot_path(daemon))
    daemon.start()
    assert policy_sha256(daemon) == true_sha256
    wait_for_snapshot(daemon, true_sha256)


@pytest.mark.parametrize("damage", ["flipped header byte", "flipped body byte", "truncated", "truncated header",
                                    "empty", "garbage", "format 1", "policies counted 3", "apps counted 2**40",
                                    "body of another policy", "header not UTF-8"])
def test_a_damaged_snapshot_is_logged_and_the_policy_worked_out_again(settled, damage):
    daemon, true_sha256, fields = settled
    body = fields["body bytes"]
    if damage == "policies counted 3":
        body = struct.pack("<q", 3) + body[8:]  # with a valid XXH64: the count itself is checked
    elif damage == "apps counted 2**40":
        # After the count of policies and the version and defaults' text: the table's
        # capacity, then its number of apps.
        text_length = struct.unpack_from("<q", body, 8)[0]
        at = 16 + text_length + 8
        body = body[:at] + struct.pack("<q", 1 << 40) + body[at + 8:]
    elif damage == "body of another policy":
        body = body[:len(body) // 2] + bytes(len(body) - len(body) // 2)
    write_snapshot(daemon, dict(fields, sha256=PLANTED), body)
    with open(snapshot_path(daemon), "rb") as f:
        content = bytearray(f.read())
    if damage == "flipped header byte":
        position = content.index(b"sha256 ") + 10
        content[position] ^= 0x01
    elif damage == "flipped body byte":
        content[len(content) - len(body) // 2] ^= 0x10
    elif damage == "truncated":
        content = content[:len(content) - 20]
    elif damage == "truncated header":
        content = content[:content.index(b"checksum ")]
    elif damage == "empty":
        content = b""
    elif damage == "garbage":
        content = os.urandom(300)
    elif damage == "header not UTF-8":
        content = b"\xff\n" * 6 + b"\xff" * 40 + b"\n" + body  # a checksum line shorter in bytes than as text
    elif damage == "format 1":
        header = "proctor-policy-snapshot 1\n" + "".join(f"{name} {fields[name]}\n" for name in ("build", "files", "bundle"))
        header += f"sha256 {PLANTED}\n"
        content = (header + f"checksum {hashlib.sha256(header.encode()).hexdigest()}\n").encode()
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


def test_a_file_replaced_with_its_size_and_times_kept_does_not_use_the_snapshot(settled):
    """What an editor or an administrator might do that keeps every file's size and mtime, each
    left to settle (so the files alone could key a snapshot): rewritten in place with its mtime
    set back (touch -d), replaced by a rename, made a symlink to another file. The file's ctime
    (and, for the last two, its inode) moved, so the snapshot of the files before is not used."""
    daemon, true_sha256, fields = settled
    policy_dir = os.path.join(daemon.config_dir, "policy.d")
    path = os.path.join(policy_dir, "00-test.json")

    def same_size_and_times(version, write):
        before = os.stat(path)
        write(version)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns), follow_symlinks=True)
        after = os.stat(path)
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    def in_place(version):
        with open(path, "r+") as f:
            f.write(json.dumps(base_policy(version), indent=2))

    def renamed_over(version):
        write_policy(daemon.config_dir, base_policy(version), name=".new")
        os.rename(os.path.join(policy_dir, ".new"), path)

    def symlinked(version):
        target = os.path.join(daemon.config_dir, "elsewhere.json")
        with open(target, "w") as f:
            f.write(json.dumps(base_policy(version), indent=2))
        os.unlink(path)
        os.symlink(target, path)

    for version, write in (("snap.2", in_place), ("snap.3", renamed_over), ("snap.4", symlinked)):
        now = wait_for_snapshot(daemon, policy_sha256(daemon))
        write_snapshot(daemon, dict(now, sha256=PLANTED))
        daemon.stop()
        same_size_and_times(version, write)
        time.sleep(2.2)  # settled: the files' identity alone would key a snapshot
        daemon.start()
        assert policy_sha256(daemon) != PLANTED, f"{write.__name__}: the stale snapshot was used"
        assert policy_in_force(daemon)["version"] == version


def test_an_applied_bundle_keys_the_snapshot(settled):
    daemon, true_sha256, fields = settled
    reply = raw_call(daemon.admin, "io.proctor.Admin.ApplyPolicy", {"policy": base_policy("snap.2")})
    applied = reply["parameters"]["sha256"]
    assert applied != true_sha256
    with_bundle = wait_for_snapshot(daemon, applied)
    row, bundle_sha256 = with_bundle["bundle"].split(" ")
    assert int(row) >= 1 and len(bundle_sha256) == 64
    assert with_bundle["files"] == fields["files"]

    in_force = policy_in_force(daemon)
    restart(daemon)
    assert policy_sha256(daemon) == applied
    assert policy_in_force(daemon) == in_force
    # The snapshot of the policy.d alone does not stand for policy.d under the bundle.
    write_snapshot(daemon, dict(fields, sha256=PLANTED))
    restart(daemon)
    assert policy_sha256(daemon) == applied
    wait_for_snapshot(daemon, applied)  # written again off the loop: not over the next plant
    write_snapshot(daemon, dict(with_bundle, sha256=PLANTED))
    restart(daemon)
    assert policy_sha256(daemon) == PLANTED
    assert policy_in_force(daemon) == in_force
    # policy.d compiled alone came back too: a reload finds the files equal to it and keeps
    # the policy in force (a policy.d restored wrong would be compiled again under the bundle,
    # giving the applied hash, not the planted one).
    daemon.process.send_signal(signal.SIGHUP)
    assert "Reloaded policy.d" in daemon.wait_for_log("Reloaded policy.d")
    assert policy_sha256(daemon) == PLANTED


def test_a_temporary_file_left_by_a_killed_writer_is_removed(settled):
    daemon, true_sha256, fields = settled
    # What a proctord killed between creating and renaming its replacement leaves behind
    # (every pid is below 1 << 22, the kernel's PID_MAX_LIMIT, so no process has this one).
    abandoned = os.path.join(daemon.state_dir, f".tmp.{1 << 22}.1f.policy.snapshot")
    with open(abandoned, "w") as f:
        f.write(FORMAT + "\n")
    raw_call(daemon.admin, "io.proctor.Admin.ApplyPolicy", {"policy": base_policy("snap.3")})
    deadline = time.monotonic() + 10
    while os.path.exists(abandoned) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not os.path.exists(abandoned)
