"""dlp.fileExport.enforcement "kernel" where the kernel refuses Landlock (issue 13 §4): the real
test app and the real proctord, the app started under a seccomp filter that answers Landlock's
system calls with ENOSYS — what a kernel without Landlock, or a container runtime's filter, does.
The SDK falls back to advisory enforcement, says so once, and proctord shows it."""
import ctypes
import json
import os
import platform
import plistlib
import queue
import signal
import subprocess
import threading

import pytest

from conftest import BIN, Daemon, base_policy, proctorctl, write_policy

APP = "io.proctor.test.kernel-export"
TESTAPP = os.path.join(BIN, "proctor-kit-testapp")
FALLBACK = 'dlp.fileExport.enforcement is "kernel" but the kernel has no Landlock'

# seccomp: landlock_create_ruleset, landlock_add_rule, landlock_restrict_self (444–446 on every
# architecture) fail with ENOSYS; everything else is allowed.
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def without_landlock():
    """preexec_fn: installs the filter in the child, before it executes the app."""
    libc = ctypes.CDLL(None, use_errno=True)
    enosys = 38
    program = [
        (0x20, 0, 0, 4),                        # A = arch
        (0x15, 0, 4, AUDIT_ARCH[platform.machine()]),  # not this arch: allow
        (0x20, 0, 0, 0),                        # A = syscall number
        (0x35, 0, 2, 444),                      # < 444: allow
        (0x25, 1, 0, 446),                      # > 446: allow
        (0x06, 0, 0, 0x00050000 | enosys),      # SECCOMP_RET_ERRNO | ENOSYS
        (0x06, 0, 0, 0x7FFF0000),               # SECCOMP_RET_ALLOW
    ]
    filters = (SockFilter * len(program))(*[SockFilter(*instruction) for instruction in program])
    fprog = SockFprog(len(program), filters)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        os._exit(90)
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        os._exit(91)


class App:
    """The test app as a child process, its standard output read line by line."""

    def __init__(self, workdir, daemon, writes, preexec_fn=None):
        plist = os.path.join(workdir, "Info.plist")
        with open(plist, "wb") as f:
            plistlib.dump({"NSPrincipalClass": "ProctorKit.PolicyApplication", "ProctorAppID": APP,
                           "CFBundleShortVersionString": "1.0.0", "ProctorDataDirectories": ["~/data"]}, f)
        env = {key: value for key, value in os.environ.items() if key not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
        env.update({"PROCTOR_AGENT_SOCKET": daemon.agent, "PROCTOR_INFO_PLIST": plist, "HOME": os.path.join(workdir, "home"),
                    "TESTAPP_WRITE_PATHS": json.dumps(writes)})
        self.process = subprocess.Popen([TESTAPP], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        preexec_fn=preexec_fn)
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read, args=(self.process.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._read, args=(self.process.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _read(stream, sink):
        for line in stream:
            sink(line.rstrip("\n"))

    def wait_for(self, predicate, timeout=15):
        while True:
            line = self.lines.get(timeout=timeout)
            if predicate(line):
                return line

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=15) == 0, self.stderr


def app_shown_with(daemon, needle, attempts=100):
    """`proctorctl app APP` once it shows `needle` (the SDK reports in the background), or as
    it is after `attempts` tries 0.1 s apart."""
    text = ""
    for _ in range(attempts):
        text = proctorctl(daemon, "app", APP, check=0).stdout
        if needle in text:
            break
        threading.Event().wait(0.1)
    return text


@pytest.fixture
def kernel_policy_daemon(workdir):
    os.makedirs(os.path.join(workdir, "home", "Export"))
    os.makedirs(os.path.join(workdir, "outside"))
    daemon = Daemon(workdir)
    app = {"state": "authorized", "match": {"executable": os.path.realpath(TESTAPP), "users": ["*"]},
           "dlp": {"fileExport": {"allow": [os.path.join(workdir, "home", "Export", "**")], "enforcement": "kernel"}}}
    write_policy(daemon.config_dir, base_policy(**{APP: app}))
    daemon.start()
    yield daemon
    daemon.stop()


@pytest.mark.skipif(platform.machine() not in AUDIT_ARCH, reason="the seccomp filter knows x86_64 and aarch64")
def test_without_landlock_the_app_runs_advisory_says_so_once_and_proctorctl_shows_it(workdir, kernel_policy_daemon):
    outside = os.path.join(workdir, "outside", "file")
    app = App(workdir, kernel_policy_daemon, [outside], preexec_fn=without_landlock)
    try:
        # Nothing confines the app: the write the kernel would refuse succeeds.
        assert app.wait_for(lambda line: line.startswith("write ")) == f"write {outside} main=ok worker=ok"
        app.process.send_signal(signal.SIGHUP)
        assert app.wait_for(lambda line: line.startswith("write ")) == f"write {outside} main=ok worker=ok"

        text = app_shown_with(kernel_policy_daemon, "advisory: ")
        lines = text.splitlines()
        start = lines.index("file export:")
        assert "advisory: the kernel has no Landlock" in lines[start + 1], text
        assert "(errno 38)" in lines[start + 1], text  # ENOSYS

        detail = json.loads(proctorctl(kernel_policy_daemon, "app", APP, "--json", check=0).stdout)
        reported = [s["fileExportEnforcement"] for s in detail["app"]["sessions"] if "fileExportEnforcement" in s]
        assert [r["mode"] for r in reported] == ["advisory"], detail["app"]["sessions"]
        assert all(s["pid"] == app.process.pid for s in detail["app"]["sessions"])

        events = proctorctl(kernel_policy_daemon, "events", "--kind", "enforcement", "--output", "json", check=0).stdout
        assert [json.loads(line)["data"]["detail"]["enforcement"] for line in events.splitlines()] == ["advisory"]
    finally:
        app.stop()
    # Said once on standard error, however many policy updates and reloads follow.
    assert sum(FALLBACK in line for line in app.stderr) == 1, app.stderr


def test_with_landlock_the_same_policy_is_enforced_by_the_kernel(workdir, kernel_policy_daemon):
    outside = os.path.join(workdir, "outside", "file")
    inside = os.path.join(workdir, "home", "Export", "file")
    app = App(workdir, kernel_policy_daemon, [outside, inside])
    try:
        assert app.wait_for(lambda line: line.startswith("write ")) == f"write {outside} main=errno=13 worker=errno=13"
        assert app.wait_for(lambda line: line.startswith("write ")) == f"write {inside} main=ok worker=ok"
        assert not os.path.exists(outside)
        text = app_shown_with(kernel_policy_daemon, "kernel (Landlock ABI ")
        assert "kernel (Landlock ABI " in text, text
    finally:
        app.stop()
    assert not any(FALLBACK in line for line in app.stderr), app.stderr


def test_confined_app_keeps_updating_its_offline_view_and_nothing_else_beside_it(workdir, kernel_policy_daemon):
    """The Landlock layer allows the SDK's own offline view file (written in place), not its folder."""
    state = os.path.join(workdir, "home", ".local", "state", "proctor")
    cache = os.path.join(state, APP + ".view")
    beside = os.path.join(state, "smuggled")
    app = App(workdir, kernel_policy_daemon, [beside, cache])
    try:
        assert app.wait_for(lambda line: line.startswith("write ")) == f"write {beside} main=errno=13 worker=errno=13"
        assert app.wait_for(lambda line: line.startswith("write ")) == f"write {cache} main=ok worker=ok"
        assert not os.path.exists(beside)
        assert "kernel (Landlock ABI " in app_shown_with(kernel_policy_daemon, "kernel (Landlock ABI ")

        # The test app emptied the file: the next view proctord pushes must be written into it.
        first = cached_view(cache, lambda view: True)
        with open(os.path.join(kernel_policy_daemon.config_dir, "policy.d", "00-test.json")) as f:
            policy = json.load(f)
        policy["version"] = "test.2"
        policy["apps"][APP]["config"] = {"reloaded": True}  # the app's own view changes: it is pushed
        write_policy(kernel_policy_daemon.config_dir, policy)
        kernel_policy_daemon.process.send_signal(signal.SIGHUP)
        updated = cached_view(cache, lambda view: view != first)
        assert updated is not None and updated != first, (first, updated)
        assert json.loads(updated["payload"])["appId"] == APP
        assert '"reloaded":true' in updated["payload"].replace(" ", ""), updated["payload"]
        assert os.stat(cache).st_mode & 0o777 == 0o600
    finally:
        app.stop()
    assert not any(refused(line) or "offline view" in line for line in app.stderr), app.stderr


def test_a_wipe_of_a_confined_app_empties_its_data_directory_and_keeps_it(workdir, kernel_policy_daemon):
    """Landlock lets the app change what lies beneath ~/data, not remove ~/data from the home."""
    data = os.path.join(workdir, "home", "data")
    app = App(workdir, kernel_policy_daemon, [])
    try:
        assert "kernel (Landlock ABI " in app_shown_with(kernel_policy_daemon, "kernel (Landlock ABI ")
        os.makedirs(os.path.join(data, "nested"))
        with open(os.path.join(data, "nested", "secret"), "w") as f:
            f.write("org data")
        proctorctl(kernel_policy_daemon, "wipe", APP, check=0)
        for _ in range(100):
            if not os.listdir(data):
                break
            threading.Event().wait(0.1)
        assert os.listdir(data) == [] and os.stat(data).st_mode & 0o777 == 0o700
        events = proctorctl(kernel_policy_daemon, "app", APP, check=0).stdout
        assert "could not wipe" not in events, events
    finally:
        app.stop()
    assert not any(refused(line) or "could not wipe" in line for line in app.stderr), app.stderr

def refused(line):
    """A line of the app's standard error that says the kernel refused the SDK something."""
    return "EACCES" in line or "Permission denied" in line or "errno 13" in line


def cached_view(path, accept, attempts=100):
    """The view cached at `path` once it is one and `accept` takes it, or None after `attempts`
    tries 0.1 s apart (the SDK writes it from its subscription thread)."""
    for _ in range(attempts):
        with open(path, "rb") as f:
            content = f.read()
        if content:
            view = json.loads(content)
            if accept(view):
                return view
        threading.Event().wait(0.1)
    return None
