#!/bin/bash
# The real proctord under the project's real units in a systemd box (TESTING.md): socket
# activation, READY/STATUS/RELOADING/STOPPING, reload with a good and a broken policy, the
# watchdog, denials in the journal with their catalog text, and a fatal start-up failure —
# all under the unit's hardening (dynamic user, CAP_SYS_PTRACE only, read-only /etc).
# One box serves every check, in the order a machine would live through them.
# Usage (from the repo root): Tests/systemd/test-proctord.sh "$(swift build --show-bin-path)"
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
BIN_DIR=$(cd "${1:?usage: $0 BIN_DIR (swift build --show-bin-path)}" && pwd)
[ -x "$BIN_DIR/proctord" ] || { echo "build proctord first: swift build --product proctord" >&2; exit 2; }
python=$(command -v /usr/bin/python3 || command -v python3)
python_exe=$("$python" -c 'import os, sys; print(os.path.realpath(sys.executable))')
watchdog_seconds=3
app=io.proctor.systemd-test
agent=/run/proctor/io.proctor.Agent
admin=/run/proctor/io.proctor.Admin

# Message ids (Sources/ProctorDaemon/DaemonEvents.swift).
id_ready=f3335cbfd2a549648e5fa4e3d322b0ca
id_reload_succeeded=0987ce39a1a04b68b12e42a0a603b261
id_reload_failed=cbf4e86b6aef4ae2a86ff72eb1c7ee15
id_snapshot_ignored=7caa0631e75742e68a0be03e79b2ea19
id_registered=af576a13fab8475eab3b3f4cc9b613fa
id_denied=b1a2f28f21824eeaa03407dabfd373a4
id_stopping=a57820dc9c044392a287fe9f65144e6f
id_storage_failure=931641eee5d6428d9b294d4fb6b7c16d

host_before=$(ls -d /run/proctor /var/lib/private/proctor /etc/proctor 2>&1
               journalctl --no-pager -q -o cat MESSAGE_ID=$id_ready 2>/dev/null | wc -l)

box_new proctord "$BIN_DIR"
# A file in the host's /tmp that must outlive the box (whose systemd cleans its own /tmp).
host_marker=$(mktemp /tmp/proctor-host-marker.XXXXXX)
trap 'status=$?; rm -f "$host_marker"; (exit $status); box_teardown' EXIT
# The real units, with a short watchdog so the test need not wait 30 s.
box_proctor_units "$BIN_DIR/proctord" "s/^WatchdogSec=.*/WatchdogSec=${watchdog_seconds}s/"
box_catalog "$repo/systemd/proctor.catalog"

policy_dir=$(box_etc proctor/policy.d)
mkdir -p "$policy_dir"
cp "$repo/config/policy.d/"*.json "$policy_dir/"
# policy_write NAME — writes /etc/proctor/policy.d/NAME from standard input: into the overlay's
# upper folder before the box boots, through the box's /etc (box_write) once it runs.
policy_write() {
    if [ -n "$BOX_PID" ]; then
        box_write "/etc/proctor/policy.d/$1"
    else
        cat > "$policy_dir/$1"
    fi
}
# policy_file NAME VERSION — an app this test's Python client may register as (its
# resolved executable, as root), printing blocked; the version is the one in force.
policy_file() {
    policy_write "$1" <<POLICY
{
  "schema": 1,
  "version": "$2",
  "apps": {
    "$app": {
      "state": "authorized",
      "match": { "executable": "$python_exe", "users": ["root"] },
      "dlp": { "print": "block" }
    }
  }
}
POLICY
}
policy_file 50-test.json systemd-test.1

if ! box_boot; then
    check "the box boots" false
    box_finish
fi
box_proctor_accounts || check "sysusers.d and tmpfiles.d entries apply in the box" false

call() {  # call SOCKET CALL… — Varlink calls on one connection, inside the box (varlink-call.py)
    box_run timeout 30 "$python" "$here/varlink-call.py" "$@"
}
field() {  # field PYTHON_EXPRESSION — evaluates it on the JSON line read from stdin (as `r`)
    "$python" -c "import json, sys; r = json.loads(sys.stdin.readline()); print($1)"
}
status_field() {  # status_field PYTHON_EXPRESSION — a field of Admin.Status
    call "$admin" io.proctor.Admin.Status | field "$1"
}
show() {  # show PROPERTY — a property of proctord.service
    box_run systemctl show -P "$1" proctord.service
}
journal() {  # journal MATCH… — proctord's journal records as JSON lines
    box_run journalctl --no-pager -o json -u proctord.service "$@"
}
status_text() {
    box_run systemctl status --no-pager proctord.service 2>&1
}
# proctord logs through a queue and journald stores asynchronously: a record may arrive a
# moment after the reply that caused it, so a check for one waits (bounded) for it.
record_matches() {  # record_matches MESSAGE_ID PYTHON_CONDITION — some record of the id satisfies it (as `r`)
    box_journal_sync
    journal "MESSAGE_ID=$1" | "$python" -c "import json, sys
sys.exit(0 if any(eval(sys.argv[1], {'r': json.loads(line)}) for line in sys.stdin) else 1)" "$2"
}
no_record_matches() { ! record_matches "$@"; }
has_record() {  # has_record MESSAGE_ID PYTHON_CONDITION — waits up to 10 s for such a record
    box_wait_for 10 record_matches "$@" || { journal "MESSAGE_ID=$1"; false; }
}
notifications() {  # notifications PID — what PID told systemd (sd_notify), one message a line, from PID 1's debug log
    box_journal_sync
    box_run journalctl --no-pager -o cat -u proctord.service |
        sed -n "s/^proctord.service: Got notification message from PID $1 (\(.*\))\$/\1/p"
}
reload_notified() {  # reload_notified PID VERSION — RELOADING=1 with MONOTONIC_USEC=, later READY=1 with VERSION's STATUS=
    notifications "$1" | "$python" -c "import re, sys
lines = sys.stdin.read().splitlines()
starts = [i for i, line in enumerate(lines) if re.match(r'RELOADING=1, MONOTONIC_USEC=[0-9]+(, |$)', line)]
ready = [i for i, line in enumerate(lines) if line.startswith('READY=1, STATUS=Policy ' + sys.argv[1] + ':')]
sys.exit(0 if starts and ready and ready[-1] > starts[-1] else 1)" "$2"
}
count_records() {  # count_records MESSAGE_ID
    box_journal_sync
    journal "MESSAGE_ID=$1" | grep -c .
}

# PID 1 logs every sd_notify message it receives at debug level: the checks read them there.
box_run systemd-analyze log-level debug

# --- Socket activation ---------------------------------------------------------------
box_run systemctl start proctord.socket proctord-admin.socket
check_output "with only the socket units started, proctord.service is inactive" inactive show ActiveState
socket_inodes=$(box_run stat --printf '%i ' "$agent" "$admin")
# The first client is `proctorctl status` (its default address is the socket unit's path)
# once proctorctl has its online verbs, else this test's own Varlink client.
if [ -x "$BIN_DIR/proctorctl" ] && "$BIN_DIR/proctorctl" status --help > /dev/null 2>&1; then
    first_client="proctorctl status --json"
    first_status() { box_run timeout 30 "$BIN_DIR/proctorctl" status --json | field "r['policy']['version']"; }
else
    first_client="Admin.Status"
    first_status() { status_field "r['policy']['version']"; }
fi
check_output "the first call ($first_client) starts proctord.service, which answers with the policy of policy.d" \
    systemd-test.1 first_status
# proctord answers once READY=1 is sent; the unit turns active only after ExecStartPost= (the
# copy of the view-signing key) has run, so the state may still be "activating" for a moment.
service_active() { [ "$(show ActiveState)" = active ]; }
check "… and the service is active (after its ExecStartPost=)" box_wait_for 20 service_active
check_output "proctord took the handed sockets: the socket files are the ones systemd bound (same inodes)" \
    "$socket_inodes" box_run stat --printf '%i ' "$agent" "$admin"
main_pid=$(show MainPID)
shared_listener() {  # shared_listener PATH — the listening socket at PATH is one object held by PID 1 and proctord
    box_run ss -xlpH | awk -v path="$1" '$5 == path' |
        grep -q "(\"proctord\",pid=$main_pid,fd=[0-9]*),(\"systemd\",pid=1,fd=[0-9]*)\|(\"systemd\",pid=1,fd=[0-9]*),(\"proctord\",pid=$main_pid,fd=[0-9]*)"
}
check "… and no re-bind: each listening socket is one object held by systemd and proctord (ss -xlp)" \
    eval 'shared_listener "$agent" && shared_listener "$admin"'
check "proctord runs as a dynamic (non-root) user with CAP_SYS_PTRACE as its only capability" \
    sh -c "s=\$(nsenter -t $BOX_PID -m -p cat /proc/$main_pid/status)
           echo \"\$s\" | awk '/^Uid:/ { exit \$2 == 0 }' && echo \"\$s\" | grep -qx 'CapEff:[[:space:]]*0000000000080000'"

# --- Start, READY, STATUS ------------------------------------------------------------
box_run timeout 30 systemctl stop proctord.service 2>/dev/null
box_run timeout 30 systemctl start proctord.service
check_output "systemctl start returns once proctord said READY=1 (the unit is active, not activating)" \
    "active running" sh -c "nsenter -t $BOX_PID -m -p systemctl show -P ActiveState proctord.service | tr '\n' ' '
                            nsenter -t $BOX_PID -m -p systemctl show -P SubState proctord.service"
main_pid=$(show MainPID)
ready_notifications() { notifications "$1" | grep '^READY=1'; }
check_output "… which it sent once, with its first STATUS= line" \
    "READY=1, STATUS=Policy systemd-test.1: 1 managed apps, 0 sessions" ready_notifications "$main_pid"
check "the journal holds its ready event with the policy version" \
    has_record "$id_ready" "r['POLICY_VERSION'] == 'systemd-test.1' and r['_PID'] == '$main_pid'"
check "systemctl status shows proctord's STATUS= line: policy version, managed apps, sessions" \
    sh -c "nsenter -t $BOX_PID -m -p systemctl status --no-pager proctord.service | grep -F 'Status: \"Policy systemd-test.1: 1 managed apps, 0 sessions\"'"

# --- An app registers and is denied: the identity check and the journal ---------------
# The Python client runs as root; proctord (a dynamic user) resolves its /proc/PID/exe.
# The client holds its connection (and so its session) open for a moment, long enough to
# see the STATUS= line count it.
replies_file="$BOX_ROOT/agent-replies"
call --hold 5 "$agent" "io.proctor.Agent.Register={\"appId\": \"$app\", \"version\": \"1.0.0\"}" \
    'io.proctor.Agent.Decide={"session": "@session", "action": "print"}' > "$replies_file" 2>&1 &
client_pid=$!
check "while an app is connected, the STATUS= line counts its session" \
    box_wait_for 10 sh -c "nsenter -t $BOX_PID -m -p systemctl status --no-pager proctord.service |
                           grep -F 'Status: \"Policy systemd-test.1: 1 managed apps, 1 sessions\"'"
wait "$client_pid"
replies=$(cat "$replies_file")
check "… and once it disconnects, no longer" \
    box_wait_for 10 sh -c "nsenter -t $BOX_PID -m -p systemctl status --no-pager proctord.service |
                           grep -F 'Status: \"Policy systemd-test.1: 1 managed apps, 0 sessions\"'"
check "a root client registers as $app: proctord (dynamic user) read its /proc/PID/exe" \
    sh -c "printf '%s\n' '$replies' | head -n 1 | grep -q '\"state\": \"authorized\"'"
check "printing is denied by the app's rule" \
    sh -c "printf '%s\n' '$replies' | sed -n 2p | grep -q '\"allowed\": false'"
check "the registration is in the journal with the peer's executable" \
    has_record "$id_registered" "r['APP_ID'] == '$app' and r['PEER_EXE'] == '$python_exe' and r['PEER_UID'] == '0'"
check "journalctl -u proctord -o json holds the denial with MESSAGE_ID, APP_ID, ACTION, RULE, DECISION" \
    has_record "$id_denied" "(r['APP_ID'], r['ACTION'], r['RULE'], r['DECISION'], r['PRIORITY']) == ('$app', 'print', 'apps[\\\"$app\\\"].dlp.print', 'denied', '4')"
as_nobody() {  # as_nobody COMMAND… — inside the box, as the unprivileged user nobody
    box_run setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
}
check "Agent.GetInfo serves the view-signing key that the unit copied beside the sockets (root's, mode 0644)" \
    sh -c "key=\$(nsenter -t $BOX_PID -m -p timeout 30 '$python' '$here/varlink-call.py' $agent 'io.proctor.Agent.GetInfo={}' |
                   $python -c 'import json, sys; print(json.load(sys.stdin)[\"viewSigningKey\"])') &&
           [ \"\$key\" = \"\$(nsenter -t $BOX_PID -m -p cat /run/proctor/view-signing-key.pub)\" ] &&
           [ \"\$(nsenter -t $BOX_PID -m -p stat -c '%U %a' /run/proctor/view-signing-key.pub)\" = 'root 644' ]"
check "an unprivileged user reaches the Agent socket through /run/proctor" \
    as_nobody timeout 30 "$python" "$here/varlink-call.py" "$agent" org.varlink.service.GetInfo
check "… and is refused as $app by the identity check (the policy says users: root)" \
    sh -c "nsenter -t $BOX_PID -m -p setpriv --reuid=nobody --regid=nogroup --clear-groups -- timeout 30 '$python' '$here/varlink-call.py' \
           $agent 'io.proctor.Agent.Register={\"appId\": \"$app\"}' 2>&1 | grep -F 'error io.proctor.Agent.IdentityMismatch'"
check "… but cannot open the Admin socket (mode 0660 root:proctor-admin)" \
    sh -c "! nsenter -t $BOX_PID -m -p setpriv --reuid=nobody --regid=nogroup --clear-groups -- timeout 30 '$python' '$here/varlink-call.py' \
           $admin io.proctor.Admin.Status"
box_run journalctl --update-catalog
check "journalctl -x shows the catalog text for the denial" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -x -u proctord.service MESSAGE_ID=$id_denied |
           grep -F 'Proctor denied print for $app'"
check "the state database in StateDirectory took the registration (GetApp shows it)" \
    sh -c "call() { nsenter -t $BOX_PID -m -p timeout 30 '$python' '$here/varlink-call.py' \"\$@\"; }
           call $admin 'io.proctor.Admin.GetApp={\"appId\": \"$app\"}' |
           $python -c 'import json, sys; assert json.load(sys.stdin)[\"app\"][\"lastRegistration\"][\"version\"] == \"1.0.0\"'"
check "… as a file in /var/lib/private/proctor, owned by the dynamic user" \
    sh -c "nsenter -t $BOX_PID -m -p find /var/lib/private/proctor -type f ! -user root | grep -q ."
check_output "no storage failure was logged" 0 count_records "$id_storage_failure"
# ProcSubset=pid hides /proc/sys/kernel/random/boot_id from proctord; the unit hands it the
# boot id (%b), without which a verified process could not keep its identity (README, Security).
check_output "the verified client is pinned under this boot's id, which the unit hands proctord" \
    "$(tr -d '-' < /proc/sys/kernel/random/boot_id)" \
    box_run "$python" -c 'import sqlite3; print(*{row[0] for row in sqlite3.connect("/var/lib/private/proctor/state.db").execute("SELECT boot_id FROM identity_pins")})'

# --- A flood of denials does not silence the journal -------------------------------------
# journald drops a service's lines past a burst (10 000 by default, scaled by free space) per
# 30 s and priority: an app denied in a loop used to take proctord's other warnings down with
# its denials, such as the refused registration below (seen: 35 000 denial lines, and the
# refusal after them missing). proctord logs a burst of each user's denials and counts the rest.
id_refused_identity=e3fb668b2e9745efb6ca333fc0a56b57
id_denials_suppressed=173b6ce832f848fdae6540f8bd794ef7
more_records_than() {  # more_records_than MESSAGE_ID COUNT
    [ "$(count_records "$1")" -gt "$2" ]
}
denials_before=$(count_records "$id_denied")
refusals_before=$(count_records "$id_refused_identity")
flood=$(call --repeat 60000 "$agent" "io.proctor.Agent.Register={\"appId\": \"$app\", \"version\": \"1.0.0\"}" \
             'io.proctor.Agent.Decide={"session": "@session", "action": "print"}' | tail -n 1)
check "an app that asks to print 60 000 times in a row is denied 60 000 times" \
    sh -c "printf '%s\n' '$flood' | grep -q '^60000 .*\"allowed\": false'"
as_nobody timeout 30 "$python" "$here/varlink-call.py" "$agent" "io.proctor.Agent.Register={\"appId\": \"$app\"}" \
    > /dev/null 2>&1
check "a registration refused right after the flood is in the journal: journald dropped none of proctord's warnings" \
    box_wait_for 10 more_records_than "$id_refused_identity" "$refusals_before"
flood_accounted() {  # every denial of the flood is a journal line, or counted in a line that says how many were not
    local logged suppressed
    logged=$(($(count_records "$id_denied") - denials_before))
    suppressed=$(journal "MESSAGE_ID=$id_denials_suppressed" | "$python" -c "import json, sys
print(sum(int(r['SUPPRESSED']) for r in map(json.loads, sys.stdin) if r['PEER_UID'] == '0'))")
    [ "$logged" -le 200 ] && [ $((logged + suppressed)) = 60000 ]
}
check "the journal has a burst of the flood's denials (at most 100 per 10 s window), and once the window ends one line that counts the rest" \
    box_wait_for 25 flood_accounted

# --- Reload -----------------------------------------------------------------------------
policy_file 50-test.json systemd-test.2
box_run timeout 30 systemctl reload proctord.service
check "systemctl reload applies the changed policy (Admin.Status shows the new version)" \
    box_wait_for 10 sh -c "[ \"\$(nsenter -t $BOX_PID -m -p timeout 30 '$python' '$here/varlink-call.py' $admin io.proctor.Admin.Status |
                              $python -c 'import json,sys; print(json.load(sys.stdin)[\"policy\"][\"version\"])')\" = systemd-test.2 ]"
check "… the journal has the reload event for it" has_record "$id_reload_succeeded" "r['POLICY_VERSION'] == 'systemd-test.2'"
check "proctord told systemd RELOADING=1 with MONOTONIC_USEC=, then READY=1 with the new STATUS=" \
    reload_notified "$main_pid" systemd-test.2
check "… and the STATUS= line follows" sh -c "nsenter -t $BOX_PID -m -p systemctl status --no-pager proctord.service | grep -F 'Status: \"Policy systemd-test.2:'"
check_output "the reload kept the same process" "$(show MainPID)" show MainPID

echo '{ "schema": 1, "version": "systemd-test.3", "apps": { "bad": {} } ' | policy_write 60-broken.json
box_run timeout 30 systemctl reload proctord.service
has_record "$id_reload_failed" "True" > /dev/null
check "a broken policy.d: the reload-failed event carries the errors (ERRORS field, priority err)" \
    has_record "$id_reload_failed" "'60-broken.json' in r['ERRORS'] and r['PRIORITY'] == '3' and r['POLICY_VERSION'] == 'systemd-test.2'"
check_output "… the old policy stays in force" systemd-test.2 status_field "r['policy']['version']"
check_output "… Admin.Status reports the failed reload" "False" status_field "r['lastReload']['ok']"
check "… systemctl status shows the failure in the STATUS= line" \
    sh -c "nsenter -t $BOX_PID -m -p systemctl status --no-pager proctord.service | grep -F 'Status: \"Policy systemd-test.2: 1 managed apps, 0 sessions; last reload failed\"'"
check "… and journalctl -x explains it" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -x -u proctord.service MESSAGE_ID=$id_reload_failed | grep -F 'previous policy stays in force'"
box_run rm /etc/proctor/policy.d/60-broken.json
box_run timeout 30 systemctl reload proctord.service

# --- Watchdog ---------------------------------------------------------------------------
stuck_pid=$(show MainPID)
check "proctord pings the watchdog (WATCHDOG=1 every WatchdogSec/2)" \
    box_wait_for 10 sh -c "[ \$(nsenter -t $BOX_PID -m -p journalctl --no-pager -o cat -u proctord.service |
                              grep -cFx 'proctord.service: Got notification message from PID $stuck_pid (WATCHDOG=1)') -ge 2 ]"
restarts_before=$(show NRestarts)
stopped_at=$SECONDS
# A MainPID of 0 would make this "kill -STOP 0": the test's own process group.
[ "${stuck_pid:-0}" -gt 1 ] 2>/dev/null || { echo "FAILED: proctord has no main pid to stop ($stuck_pid)"; BOX_FAILED=$((BOX_FAILED + 1)); box_finish; }
box_run kill -STOP "$stuck_pid"
bound=$((watchdog_seconds + 15))
box_wait_for "$bound" sh -c "p=\$(nsenter -t $BOX_PID -m -p systemctl show -P MainPID proctord.service)
    s=\$(nsenter -t $BOX_PID -m -p systemctl show -P ActiveState proctord.service)
    [ \"\$p\" != 0 ] && [ \"\$p\" != $stuck_pid ] && [ \"\$s\" = active ]"
took=$((SECONDS - stopped_at))
check "a stopped event loop (kill -STOP) is restarted by the watchdog within WatchdogSec=${watchdog_seconds}s + 15 s (took ${took}s)" \
    sh -c "[ $(show MainPID) != $stuck_pid ] && [ $(show ActiveState) = active ] && [ $took -le $bound ]"
check_output "… counted as one restart" $((restarts_before + 1)) show NRestarts
box_journal_sync
check "… and systemd logged the watchdog timeout" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -u proctord.service | grep -F 'Watchdog timeout'"
check_output "the restarted proctord answers with the policy in force" systemd-test.2 status_field "r['policy']['version']"
check_output "… and reads the state its predecessor wrote (the app's last registration)" \
    1.0.0 sh -c "nsenter -t $BOX_PID -m -p timeout 30 '$python' '$here/varlink-call.py' $admin 'io.proctor.Admin.GetApp={\"appId\": \"$app\"}' |
                 $python -c 'import json, sys; print(json.load(sys.stdin)[\"app\"][\"lastRegistration\"][\"version\"])'"

# Its policy.d was written seconds before: settled, so the snapshot (docs/state.md) is written
# under the unit's sandbox (ProtectSystem=strict, SystemCallFilter=, the dynamic user).
check "… and keeps its policy snapshot in StateDirectory (mode 0600, owned by the dynamic user)" \
    box_wait_for 10 sh -c "nsenter -t $BOX_PID -m -p find /var/lib/private/proctor/policy.snapshot -perm 0600 ! -user root | grep -q ."
check "… with no snapshot write refused by the sandbox (no record of MESSAGE_ID $id_snapshot_ignored)" \
    no_record_matches $id_snapshot_ignored True

# --- Stop -------------------------------------------------------------------------------
last_pid=$(show MainPID)
box_run timeout 30 systemctl stop proctord.service 2>/dev/null
check_output "systemctl stop: the unit is inactive (not failed) and the process exited 0" \
    "inactive success 0" echo "$(show ActiveState) $(show Result) $(show ExecMainStatus)"
check "… after proctord told systemd STOPPING=1" \
    sh -c "[ \"\$(nsenter -t $BOX_PID -m -p journalctl --no-pager -o cat -u proctord.service |
                  grep -F 'proctord.service: Got notification message from PID $last_pid (STOPPING=1')\" ]"
check "… and the journal holds its stopping event" \
    has_record "$id_stopping" "r['_PID'] == '$last_pid' and r['PRIORITY'] == '5'"
check "… while the view-signing key stays beside the sockets for offline launches (its RuntimeDirectory is gone)" \
    sh -c "nsenter -t $BOX_PID -m -p test -s /run/proctor/view-signing-key.pub && ! nsenter -t $BOX_PID -m -p test -e /run/proctor/daemon"

# --- A fatal start-up failure -----------------------------------------------------------
box_run systemctl reset-failed proctord.service
echo '{ "schema": 1, "version": "systemd-test.broken", "apps": { "bad": {} } }' | policy_write 50-test.json
check "with an invalid policy.d and no applied bundle, systemctl start fails" \
    sh -c "! nsenter -t $BOX_PID -m -p timeout 30 systemctl start proctord.service"
check_output "… the unit is failed and not being restarted (exit status 78, RestartPreventExitStatus=)" \
    "failed 78 0" echo "$(show ActiveState) $(show ExecMainStatus) $(show NRestarts)"
failed_pid=$(show ExecMainPID)
check "… after proctord told systemd STOPPING=1, then STATUS= with the reason and ERRNO=" \
    sh -c "printf '%s\n' \"\$1\" | tr '\n' '|' | grep -q '^STOPPING=1, STATUS=Failed to start: no valid policy: .*|STATUS=Failed to start: no valid policy: .*, ERRNO=22|\$'" \
    - "$(notifications "$failed_pid")"
check "… and systemctl status shows the reason in the STATUS= line" \
    sh -c "nsenter -t $BOX_PID -m -p systemctl status --no-pager proctord.service | grep -F 'Status: \"' | grep -F 'no valid policy'"

# --- A durable apply under the sandbox ---------------------------------------------------
policy_file 50-test.json systemd-test.2
applied=$(cat <<POLICY
{"policy": {"schema": 1, "version": "systemd-test.applied", "apps": {"$app": {"state": "authorized",
 "match": {"executable": "$python_exe", "users": ["root"]}, "dlp": {"print": "allow"}}}}}
POLICY
)
# reset-failed also clears the start rate limit (StartLimitBurst=), which this many starts
# in a few seconds could otherwise reach.
box_run systemctl reset-failed proctord.service
box_run timeout 30 systemctl start proctord.service
check_output "Admin.ApplyPolicy writes the bundle into the state database in StateDirectory=" \
    systemd-test.applied sh -c "nsenter -t $BOX_PID -m -p timeout 30 '$python' '$here/varlink-call.py' $admin \"io.proctor.Admin.ApplyPolicy=\$1\" |
                                 $python -c 'import json, sys; print(json.load(sys.stdin)[\"version\"])'" - "$applied"
box_run timeout 30 systemctl restart proctord.service
check_output "… and after a restart (perhaps under another dynamic uid) the applied policy is in force" \
    systemd-test.applied status_field "r['policy']['version']"

# --- The machine key from an encrypted credential (docs/crypto.md) ----------------------
data_key() {  # data_key — the key id and generation proctord releases to the root client
    nsenter -t "$BOX_PID" -m -p timeout 30 "$python" "$here/varlink-call.py" "$agent" \
        "io.proctor.Agent.Register={\"appId\": \"$app\"}" 'io.proctor.Agent.GetDataKey={"session": "@session"}' |
        sed -n 2p | "$python" -c 'import json, sys; r = json.load(sys.stdin); print(r["keyId"], r["generation"])'
}
state_key=/var/lib/private/proctor/machine-key
first_key=$(data_key)
check "outside a credential, proctord made a 0600 machine key file in its state directory and released a key" \
    sh -c "[ \"\$(nsenter -t $BOX_PID -m -p stat -c '%a %s' $state_key)\" = '600 32' ] && [ -n '$first_key' ]"
box_run mkdir -p /etc/credstore.encrypted
box_run systemd-creds setup 2>/dev/null
check "systemd-creds seals the existing key file to the host key as credential machine-key" \
    box_run systemd-creds encrypt --name=machine-key --with-key=host $state_key /etc/credstore.encrypted/proctord.machine-key
# The credential itself is not loaded here: systemd 252 in this box (PID 1 of a nested PID and
# mount namespace) leaves /run/credentials/proctord.service empty and root-owned, so proctord
# would fall back to its key file. Reading $CREDENTIALS_DIRECTORY/machine-key is tested in
# Tests/python/test_data_keys.py with the directory systemd would hand over.
mkdir -p "$BOX_ROOT/units/proctord.service.d"
echo "[Service]
LoadCredentialEncrypted=machine-key:/etc/credstore.encrypted/proctord.machine-key" > "$BOX_ROOT/units/proctord.service.d/credential.conf"
box_run systemctl daemon-reload
box_run rm /etc/credstore.encrypted/proctord.machine-key
box_run systemctl reset-failed proctord.service
box_run timeout 30 systemctl stop proctord.service
check "a LoadCredentialEncrypted= file that is missing keeps systemd 252 from starting proctord (why the unit does not name one by default)" \
    sh -c "! nsenter -t $BOX_PID -m -p timeout 30 systemctl restart proctord.service"
rm -r "$BOX_ROOT/units/proctord.service.d"
box_run systemctl daemon-reload

box_teardown
check_output "the host's /run, /var/lib, /etc and journal hold nothing of proctord's, and its /tmp survived" \
    "$host_before" sh -c "test -f '$host_marker' && ls -d /run/proctor /var/lib/private/proctor /etc/proctor 2>&1
                          journalctl --no-pager -q -o cat MESSAGE_ID=$id_ready 2>/dev/null | wc -l"
box_finish
