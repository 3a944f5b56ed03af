"""What proctord says at start-up about its state directory and its policy directory."""
import os
import signal

import pytest

from conftest import Daemon, base_policy, read_only_bind_mount, write_policy


def test_a_read_only_state_directory_is_reported_at_start(workdir):
    """At once, at the storage-failure priority, rather than at the first apply or wipe."""
    if os.geteuid() != 0:
        pytest.skip("bind mounts need root")
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    daemon.start()
    daemon.stop()
    assert "read-only" not in daemon.log()
    state = daemon.state_dir
    with read_only_bind_mount(state):
        daemon.start()
        line = next(line for line in daemon.wait_for_log("State storage is read-only").splitlines()
                    if "State storage is read-only" in line)
        assert line.startswith("err State storage is read-only: " + state + " cannot be written"), line
        assert "STATE_DIRECTORY=" + state in line
        daemon.stop()


def test_a_policy_d_link_to_another_file_is_not_a_policy_file_and_is_not_quoted(workdir):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy())
    secret = os.path.join(workdir, "secret")
    with open(secret, "w") as f:
        f.write("s3cr3t-token")
    policy_dir = os.path.join(daemon.config_dir, "policy.d")
    os.symlink(secret, os.path.join(policy_dir, "50-secret.json"))
    os.symlink("/usr/bin/sh", os.path.join(policy_dir, "60-binary.json"))
    daemon.start(wait_ready=False)
    assert daemon.process.wait(timeout=20) == 78
    log = daemon.log()
    assert "50-secret.json:1:1: (document): not a policy file: a policy is a JSON object, which starts with {" in log
    assert "60-binary.json:1:1: (document): not a policy file" in log
    assert "s3cr3t" not in log and "'s'" not in log and "0x7F" not in log
