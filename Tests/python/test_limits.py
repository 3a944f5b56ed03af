"""Sizes that agree: a policy document's limit (16 MiB, PolicyLimits.maxDocumentBytes) is what
proctorctl checks, proctord's Admin socket and state store accept, and what comes back; and
who is refused first. The real proctorctl and proctord."""
import json
import os
import subprocess

from conftest import BIN, base_policy, proctorctl, raw_call

MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def bulky_policy(version, apps, note_bytes):
    policy = base_policy(version)
    for index in range(apps):
        policy["apps"][f"io.proctor.test.bulk{index}"] = {
            "state": "authorized", "match": {"executable": f"/usr/bin/bulk-{index}", "users": ["*"]},
            "config": {"note": "n" * note_bytes},
        }
    return policy


def test_a_policy_of_1_4_mb_applies_and_comes_back(daemon, workdir):
    path = os.path.join(workdir, "bundle.json")
    with open(path, "w") as f:
        json.dump(bulky_policy("large.1", 4600, 200), f)
    assert 1_300_000 < os.path.getsize(path) < 1_600_000
    applied = proctorctl(daemon, "policy", "apply", path, check=0)
    assert "applied: version large.1 is in force" in applied.stdout
    shown = json.loads(proctorctl(daemon, "policy", "show", "--json", check=0).stdout)
    assert shown["policy"]["apps"]["io.proctor.test.bulk4599"]["config"]["note"] == "n" * 200
    proctorctl(daemon, "policy", "diff", path, check=0)
    history = json.loads(proctorctl(daemon, "policy", "history", "--json", check=0).stdout)
    assert [entry["version"] for entry in history["entries"]] == ["large.1"]


def test_a_policy_file_past_the_limit_is_refused_before_connecting(daemon, workdir):
    path = os.path.join(workdir, "huge.json")
    # 70 apps with 250 000-byte notes: about 17.5 MB, each app's config within its own limit.
    with open(path, "w") as f:
        json.dump(bulky_policy("huge.1", 70, 250_000), f)
    size = os.path.getsize(path)
    assert size > MAX_DOCUMENT_BYTES
    for address in (os.path.join(workdir, "no-such-socket"), daemon.admin):
        refused = subprocess.run([os.path.join(BIN, "proctorctl"), "policy", "apply", path, "--address", address],
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2, (refused.returncode, refused.stderr)
        assert f"{path}:1:1: (document): {path} is {size} bytes, more than the 16777216 bytes (16 MiB) a policy may be" \
            in refused.stderr, refused.stderr
    assert json.loads(proctorctl(daemon, "status", "--json", check=0).stdout)["policy"]["version"] == "test.1"


def numbers_policy_text(version, apps, numbers):
    """A policy whose configs hold `1e14` written short: in canonical form each becomes
    100000000000000, three times longer. Written by hand: json.dump would write 1e14 out."""
    entries = ",".join(
        f'"io.proctor.test.n{index}": {{"state": "authorized", "match": {{"executable": "/usr/bin/n{index}"}}, '
        f'"config": {{"n": [{",".join(["1e14"] * numbers)}]}}}}' for index in range(apps))
    return f'{{"schema": 1, "version": "{version}", "apps": {{{entries}}}}}'


def test_a_policy_whose_canonical_form_is_past_the_limit_is_refused_before_connecting(workdir):
    """proctord would refuse it as an invalid policy (Admin.ApplyPolicy checks the same
    bound); proctorctl says so before sending 5.6 MB."""
    text = numbers_policy_text("expands.1", 70, 16_000)
    assert len(text) < MAX_DOCUMENT_BYTES
    path = os.path.join(workdir, "expands.json")
    with open(path, "w") as f:
        f.write(text)
    refused = subprocess.run([os.path.join(BIN, "proctorctl"), "policy", "apply", path,
                              "--address", os.path.join(workdir, "no-such-socket")],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, (refused.returncode, refused.stderr)
    assert f"{path}: the policy is " in refused.stderr
    assert "bytes in canonical form, more than the 16777216 bytes (16 MiB) a bundle may be" in refused.stderr


def test_proctorctl_refused_by_the_socket_mode_exits_4(daemon):
    assert os.stat(daemon.admin).st_mode & 0o777 == 0o660
    refused = subprocess.run(NOBODY + [os.path.join(BIN, "proctorctl"), "status", "--address", daemon.admin],
                             capture_output=True, text=True, timeout=30)
    assert refused.returncode == 4, (refused.returncode, refused.stderr)
    assert "permission denied" in refused.stderr


def test_an_unprivileged_caller_is_refused_before_its_parameters_are_looked_at(daemon, workdir):
    os.chmod(daemon.admin, 0o666)  # past the file mode: the per-call check must come first
    script = os.path.join(workdir, "client.py")
    with open(script, "w") as f:
        f.write("import json,socket,sys\n"
                "for method, parameters in json.loads(sys.argv[2]):\n"
                "    s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1])\n"
                "    s.sendall(json.dumps({'method':method,'parameters':parameters}).encode()+b'\\0')\n"
                "    d=b''\n"
                "    while not d.endswith(b'\\0'): d+=s.recv(4096)\n"
                "    print(json.loads(d[:-1]).get('error'))\n")
    calls = [("io.proctor.Admin.GetApp", {"appId": 5}), ("io.proctor.Admin.ApplyPolicy", {}),
             ("io.proctor.Admin.Wipe", {"appId": ["x"]}), ("io.proctor.Admin.Status", {"unexpected": True})]
    out = subprocess.run(NOBODY + ["/usr/bin/python3", script, daemon.admin, json.dumps(calls)],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.split() == ["org.varlink.service.PermissionDenied"] * len(calls), out.stderr
    # Root's bad parameters are still named.
    assert raw_call(daemon.admin, "io.proctor.Admin.GetApp", {"appId": 5})["error"] == "org.varlink.service.InvalidParameter"
