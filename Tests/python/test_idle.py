"""An idle proctord makes no system call: its worker threads block until there is work (no
timer), so a machine on battery is not woken by it. strace attached to every thread shows
what each one does; a blocked thread shows only the call it is blocked in, never finished."""
import json
import os
import re
import signal
import subprocess
import time

from conftest import base_policy, proctorctl, write_policy
from test_fleet import configure, fleet, sign, wait_for_post  # noqa: F401 (fleet is a fixture)
from test_policy_snapshot import policy_sha256, wait_for_snapshot

# A call strace saw return: `name(arguments) = result`, or the `<... name resumed>` end of one
# it saw begin. A call still blocked when strace detaches has no result.
FINISHED_CALL = re.compile(r"\)\s+=\s+(-?\d+|0x[0-9a-f]+|\?)")
SETTLE_SECONDS = 2.2  # PolicyDirectoryIdentity.settleSeconds: an older policy.d keys a snapshot


def system_calls(pid, seconds):
    """The system calls the threads of `pid` finished within `seconds`, as strace prints them."""
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=all", "-p", str(pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(seconds)
    tracer.send_signal(signal.SIGINT)
    _, lines = tracer.communicate(timeout=10)
    return [line for line in lines.splitlines() if FINISHED_CALL.search(line)]


def test_an_idle_proctord_makes_no_system_call_after_a_reload_an_apply_a_status_report_and_a_snapshot(fleet, workdir):
    mdm, key, daemon = fleet
    mdm.publish(sign(key, base_policy("fleet.1"), workdir, serial=100))
    configure(daemon, mdm, interval=3600, status=f"StatusURL={mdm.url('report')}\nStatusIntervalSec=3600\n")
    time.sleep(SETTLE_SECONDS)
    daemon.start()
    # The pulled bundle applied, its status document built off the loop and sent.
    wait_for_post(mdm, lambda d: d["status"]["fleet"].get("lastAppliedSerial") == 100)
    # A reload reads and compiles off the loop and frees the policy it replaced there.
    write_policy(daemon.config_dir, base_policy("local.2"))
    time.sleep(SETTLE_SECONDS)
    proctorctl(daemon, "reload", check=0)
    pushed = os.path.join(workdir, "pushed.json")
    with open(pushed, "w") as f:
        json.dump(base_policy("pushed.1"), f)
    assert "pushed.1" in proctorctl(daemon, "policy", "apply", pushed, check=0).stdout
    wait_for_snapshot(daemon, policy_sha256(daemon))
    # The log's last lines written, the status report's connection settled, and the checkpoint
    # thread's run that comes at most a second after the last write (StateStore.Configuration's
    # checkpointInterval) done.
    time.sleep(1.6)

    calls = system_calls(daemon.process.pid, seconds=3)
    assert calls == [], "\n".join(calls[:40])
