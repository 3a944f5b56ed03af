"""Who may register as an app: the identity rule against real processes, users, mount
namespaces and replaced executables (the daemon is the real proctord)."""
import os
import shutil
import sqlite3
import subprocess

import pytest

from conftest import Daemon, base_policy, write_policy

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent_register.py")
PYTHON = "/usr/bin/python3"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def needs_root_and_user_namespaces():
    if os.geteuid() != 0:
        pytest.skip("running as another user needs root")
    probe = subprocess.run(NOBODY + ["unshare", "-Urm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unprivileged user namespaces are not available: {probe.stderr.decode().strip()}")


def readable_client(workdir):
    """The client script where an unprivileged user can read it."""
    path = os.path.join(workdir, "agent_register.py")
    shutil.copy(CLIENT, path)
    os.chmod(path, 0o644)
    return path


def start_daemon(workdir, apps):
    daemon = Daemon(workdir)
    write_policy(daemon.config_dir, base_policy(**apps))
    return daemon.start()


def test_a_bind_mount_in_another_mount_namespace_does_not_make_another_file_the_app(workdir):
    """An unprivileged user mounts python over /usr/bin/sleep in a mount namespace of its
    own and runs it as /usr/bin/sleep: /proc/PID/exe then reads /usr/bin/sleep, but the
    file is python's, and the app is sleep's."""
    needs_root_and_user_namespaces()
    client = readable_client(workdir)
    daemon = start_daemon(workdir, {
        "io.proctor.test.sleep": {"state": "authorized", "match": {"executable": "/usr/bin/sleep", "users": ["*"]}},
        "io.proctor.test.python": {"state": "authorized", "match": {"executable": PYTHON, "users": ["*"]}},
    })
    try:
        attack = subprocess.run(NOBODY + ["unshare", "-Urm", "sh", "-c",
                                          'mount --bind "$0" /usr/bin/sleep && exec /usr/bin/sleep "$@"',
                                          PYTHON, client, daemon.agent, "io.proctor.test.sleep"],
                                capture_output=True, text=True, timeout=30)
        assert attack.stdout.strip() == "io.proctor.Agent.IdentityMismatch", (attack.stdout, attack.stderr)
        refusal = daemon.wait_for_log("not the file at /usr/bin/sleep")
        assert "Registration refused for io.proctor.test.sleep: pid" in refusal
        assert "runs /usr/bin/sleep (dev" in refusal, "the log shows the path the process claims and the file it runs"

        # The genuine file registers, from the same kind of namespace and user.
        genuine = subprocess.run(NOBODY + ["unshare", "-Urm", PYTHON, client, daemon.agent, "io.proctor.test.python"],
                                 capture_output=True, text=True, timeout=30)
        assert genuine.stdout.strip() == "registered", (genuine.stdout, genuine.stderr)
    finally:
        daemon.stop()


class App:
    """A long-running process of the copied executable that registers on request."""

    def __init__(self, executable, daemon, app_id):
        self.process = subprocess.Popen([executable, CLIENT, daemon.agent, app_id, "--repeat"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.first = self.process.stdout.readline().strip()

    def register(self):
        self.process.stdin.write("again\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def install(source, destination):
    """Puts a copy of `source` at `destination` as a package manager does: written beside
    it, then renamed over it, so a running process keeps the old file."""
    shutil.copy(source, destination + ".new")
    os.chmod(destination + ".new", 0o755)
    os.rename(destination + ".new", destination)


def pinned_pids(daemon):
    with sqlite3.connect(os.path.join(daemon.state_dir, "state.db")) as connection:
        return sorted(row[0] for row in connection.execute("SELECT pid FROM identity_pins"))


def test_a_verified_process_keeps_its_identity_after_an_upgrade_and_a_restart(workdir):
    executable = os.path.join(workdir, "bin", "notes")
    os.makedirs(os.path.dirname(executable))
    install(os.path.realpath(PYTHON), executable)
    app_id = "io.proctor.test.upgraded"
    daemon = start_daemon(workdir, {app_id: {"state": "authorized", "match": {"executable": executable, "users": ["*"]}}})
    verified = unverified = None
    try:
        verified = App(executable, daemon, app_id)
        assert verified.first == "registered"
        # Runs the same file but never registered before the upgrade.
        unverified = subprocess.Popen([executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)

        install(os.path.realpath(PYTHON), executable)
        assert os.readlink(f"/proc/{verified.process.pid}/exe") == executable + " (deleted)"
        daemon.stop()
        daemon.start()

        assert verified.register() == "registered"
        # A process of the old file that proctord never verified is not the app: its file is
        # no longer the one at the executable's path.
        unverified_exe = f"/proc/{unverified.pid}/exe"
        sneaky = subprocess.run(["sh", "-c", f'exec "$0" "$@"', unverified_exe, CLIENT, daemon.agent, app_id],
                                capture_output=True, text=True, timeout=30)
        assert sneaky.stdout.strip() == "io.proctor.Agent.IdentityMismatch", (sneaky.stdout, sneaky.stderr)
        # A new process must match the file on disk: the new one does, another file does not.
        fresh = App(executable, daemon, app_id)
        assert fresh.first == "registered"
        fresh.stop()
        other = os.path.join(workdir, "bin", "other")
        install(os.path.realpath(PYTHON), other)
        stranger = subprocess.run([other, CLIENT, daemon.agent, app_id], capture_output=True, text=True, timeout=30)
        assert stranger.stdout.strip() == "io.proctor.Agent.IdentityMismatch", (stranger.stdout, stranger.stderr)
        assert verified.process.pid in pinned_pids(daemon)

        # Pins die with their process: gone after the next start.
        verified.stop()
        verified = None
        daemon.stop()
        daemon.start()
        daemon.stop()
        assert pinned_pids(daemon) == []
    finally:
        for app in (verified,):
            if app:
                app.stop()
        if unverified:
            unverified.kill()
            unverified.wait()
        daemon.stop()
