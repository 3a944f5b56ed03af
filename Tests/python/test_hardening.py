"""Attacks on proctord's transport and logging, each run against the real binary
(issue 11: never hang, never lie, no single user starves the rest)."""
import fcntl
import os
import signal
import subprocess
import time

from conftest import Daemon, base_policy, raw_call, write_policy

F_SETPIPE_SZ = 1031


def wait_until_serving(d, process, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "proctord exited during start-up"
        try:
            return raw_call(d.admin, "io.proctor.Admin.Status", timeout=2)["parameters"]
        except OSError:
            time.sleep(0.05)
    raise AssertionError("proctord did not start serving")


def test_sigterm_ends_proctord_whose_stderr_nobody_reads(workdir):
    """Regression: with stderr a full pipe, the shutdown flush waited forever."""
    d = Daemon(workdir)
    write_policy(d.config_dir, base_policy())
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)  # the smallest pipe: a few dozen lines fill it
    process = subprocess.Popen(d.command(), stdout=subprocess.DEVNULL, stderr=write_end)
    os.close(write_end)
    try:
        wait_until_serving(d, process)
        # Every reload logs a line; far more than the pipe holds, and nobody reads it.
        for _ in range(200):
            process.send_signal(signal.SIGHUP)
            time.sleep(0.005)
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        # The flush gives up after 2 s; allow for a slow, shared machine.
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(read_end)


def test_journal_failures_are_counted_and_said_once_on_stderr(workdir):
    """With --log-target journal and no journald, every line was lost silently."""
    d = Daemon(workdir, extra_args=["--log-target", "journal"])
    write_policy(d.config_dir, base_policy())
    # A private mount namespace with an empty /run/systemd/journal: no journald, whatever
    # the host runs.
    script = ('mkdir -p /run/systemd/journal && mount -t tmpfs tmpfs /run/systemd/journal '
              '&& exec "$@"')
    stderr_path = os.path.join(workdir, "stderr")
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                    "sh"] + d.command(),
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        status = wait_until_serving(d, process)
        for _ in range(3):
            process.send_signal(signal.SIGHUP)  # each reload logs one more line
            time.sleep(0.05)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            status = raw_call(d.admin, "io.proctor.Admin.Status")["parameters"]
            if status["counts"]["logSinkFailures"] >= 4:
                break
            time.sleep(0.05)
        assert status["counts"]["logSinkFailures"] >= 4, status["counts"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
        with open(stderr_path, "rb") as f:
            lines = f.read().decode().splitlines()
        said = [line for line in lines if "cannot log to the journal" in line]
        assert len(said) == 1, lines
        assert "logSinkFailures" in said[0]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
