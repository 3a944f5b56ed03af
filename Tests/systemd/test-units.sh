#!/bin/bash
# Judges Proctor's unit files, sysusers/tmpfiles entries and journal catalog, and runs the
# real units in a systemd box with systemdkit-probe standing in for proctord (same hardening,
# same sockets): socket activation by FileDescriptorName=, socket modes and group, the
# dynamic user with only CAP_SYS_PTRACE, and journal logging under the sandbox.
# Usage (from the repo root): Tests/systemd/test-units.sh "$(swift build --show-bin-path)"
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
BIN_DIR=$(cd "${1:?usage: $0 BIN_DIR (swift build --show-bin-path)}" && pwd)
probe="$BIN_DIR/systemdkit-probe"
[ -x "$probe" ] || { echo "build systemdkit-probe first: swift build --product systemdkit-probe" >&2; exit 2; }
python=$(command -v /usr/bin/python3 || command -v python3)
units="$repo/systemd"
exposure_limit=${PROCTOR_EXPOSURE_LIMIT:-2.0}

host_etc_before=$(sha256sum /etc/group /etc/passwd; ls -d /etc/proctor /var/lib/proctor /var/lib/private/proctor 2>&1)
box_new units "$BIN_DIR"

# The project's units with ExecStart= pointed at a binary that exists: the probe, which
# takes the activated sockets and reports READY=1 like proctord (it writes no view-signing key
# for ExecStartPost= to copy, so that line goes; test-proctord.sh checks it with proctord).
box_proctor_units "$probe serve" "/^ExecStartPost=/d"
# proctord's sandbox around other commands, run once (Type=oneshot, no sockets or watchdog).
sandboxed_oneshot() {  # sandboxed_oneshot NAME COMMAND [SED_EXPRESSION]
    sed -e "s|^ExecStart=.*|ExecStart=$2|" -e "s|^Type=.*|Type=oneshot|" \
        -e "/^WatchdogSec=/d" -e "/^ExecStartPost=/d" -e "/^Requires=/d" -e "/^After=/d" -e "/^Sockets=/d" -e "/^Also=/d" -e "/^Restart=/d" \
        ${3:+-e "$3"} "$units/proctord.service" > "$BOX_ROOT/units/$1"
}
# The probe's logger (a Foundation thread, sd_journal_sendv) under the sandbox.
sandboxed_oneshot sandboxed-log.service "$probe log auto b1a2f28f21824eeaa03407dabfd373a4 warning \"Decision denied\" APP_ID=com.example.notes ACTION=clipboard.copy TARGET=unmanaged RULE=apps.com.example.notes.dlp.clipboard DECISION=deny SESSION=s-1 POLICY_VERSION=2026-11-29.1"
# Why CAP_SYS_PTRACE is kept: reading a root process's executable with and without it.
sandboxed_oneshot exe-with-ptrace.service "/bin/readlink -e /proc/1/exe"
sandboxed_oneshot exe-without-ptrace.service "/bin/readlink -e /proc/1/exe" "/^\(CapabilityBoundingSet\|AmbientCapabilities\)=/d"
box_catalog "$units/proctor.catalog"

(
    cd "$BOX_ROOT/units" || exit 1
    systemd-analyze verify --man=no proctord.service proctord.socket proctord-admin.socket
) > "$BOX_ROOT/verify.log" 2>&1
check "systemd-analyze verify accepts the units" sh -c "! grep . '$BOX_ROOT/verify.log' || { cat '$BOX_ROOT/verify.log'; false; }"

exposure=$(cd "$BOX_ROOT/units" && systemd-analyze security --offline=true proctord.service 2>/dev/null |
    sed -n 's/.*Overall exposure level for proctord.service: \([0-9.]*\).*/\1/p')
check "systemd-analyze security exposure ${exposure:-unknown} ≤ $exposure_limit" \
    awk -v e="${exposure:-99}" -v l="$exposure_limit" 'BEGIN { exit !(e <= l) }'

mkdir -p "$BOX_ROOT/sysusers-root/etc"
check "systemd-sysusers accepts proctor.sysusers (dry run into a scratch root)" \
    sh -c "systemd-sysusers --dry-run --root='$BOX_ROOT/sysusers-root' '$units/proctor.sysusers' 2>&1 | grep -q \"group 'proctor-admin'\""

ids_in_code=$(grep -o 'MessageID("[0-9a-f]\{32\}")' "$repo/Sources/ProctorDaemon/DaemonEvents.swift" | grep -o '[0-9a-f]\{32\}' | sort)
ids_in_catalog=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$units/proctor.catalog" | sort)
check "the catalog has exactly one entry per MESSAGE_ID of DaemonEvent ($(echo "$ids_in_code" | wc -l) ids)" \
    sh -c "[ -n '$ids_in_code' ] && [ '$ids_in_code' = '$ids_in_catalog' ] && [ -z \"\$(echo '$ids_in_code' | uniq -d)\" ]"

if ! box_boot; then
    check "the box boots" false
    box_finish
fi

check "sysusers.d and tmpfiles.d entries apply in the box" box_proctor_accounts
check "… creating the proctor-admin group" box_run getent group proctor-admin
check "… and /etc/proctor/policy.d" box_run test -d /etc/proctor/policy.d

box_run systemctl start proctord.socket proctord-admin.socket
check "with only the sockets started, the service is not running" \
    test "$(box_run systemctl show -P ActiveState proctord.service)" = inactive
check "agent socket: mode 0666, root:root" \
    test "$(box_run stat -c '%a %U:%G %F' /run/proctor/io.proctor.Agent)" = "666 root:root socket"
check "admin socket: mode 0660, root:proctor-admin" \
    test "$(box_run stat -c '%a %U:%G %F' /run/proctor/io.proctor.Admin)" = "660 root:proctor-admin socket"
agent_inode=$(box_run stat -c %i /run/proctor/io.proctor.Agent)

ask() {  # ask SOCKET — connects and prints the reply line
    box_run "$python" -c 'import socket,sys
s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1])
print(s.makefile().readline().strip())' "$1"
}
python_exe=$("$python" -c 'import os, sys; print(os.path.realpath(sys.executable))')
check "the first connection to the agent socket starts the service, which answers as 'agent'" \
    test "$(ask /run/proctor/io.proctor.Agent | cut -d' ' -f1)" = agent
check_output "the sandboxed dynamic user reads a root caller's /proc/PID/exe (CAP_SYS_PTRACE, ProtectProc=ptraceable)" \
    "agent $python_exe" ask /run/proctor/io.proctor.Agent
check "the service is active after activation" box_run systemctl is-active --quiet proctord.service
check_output "the admin socket reaches the same process as 'admin'" "admin $python_exe" ask /run/proctor/io.proctor.Admin
check "STATUS= names both handed-over sockets" \
    sh -c "nsenter -t $BOX_PID -m -p systemctl status proctord.service | grep -F 'Status: \"sockets admin=1 agent=1\"'"
check "the socket file is the one systemd bound (same inode)" \
    test "$(box_run stat -c %i /run/proctor/io.proctor.Agent)" = "$agent_inode"

main_pid=$(box_run systemctl show -P MainPID proctord.service)
check "the service runs as a dynamic (non-root) user" \
    sh -c "nsenter -t $BOX_PID -m -p awk '/^Uid:/ { exit \$2 == 0 }' /proc/$main_pid/status"
check "its only capability is CAP_SYS_PTRACE (bounding and ambient)" \
    sh -c "s=\$(nsenter -t $BOX_PID -m -p cat /proc/$main_pid/status);
           echo \"\$s\" | grep -qx 'CapBnd:[[:space:]]*0000000000080000' && echo \"\$s\" | grep -qx 'CapAmb:[[:space:]]*0000000000080000'"

box_run systemctl restart proctord.service
check_output "/run/proctor is the socket units' root-owned folder, not a link into the root-only /run/private" \
    "directory root 755" box_run stat -c '%F %U %a' /run/proctor
check_output "… the service's own RuntimeDirectory= is a subfolder owned by the dynamic user" \
    "directory 700 non-root" sh -c "nsenter -t $BOX_PID -m -p stat -c '%F %a %u' /run/proctor/daemon | awk '{ print \$1, \$2, (\$3 == 0 ? \"root\" : \"non-root\") }'"
check_output "after a service restart the sockets still exist (they are not in its RuntimeDirectory=)" \
    "agent $python_exe" ask /run/proctor/io.proctor.Agent
box_run systemctl stop proctord.service 2>/dev/null
check_output "after the service stops, the socket starts it again on demand" \
    "admin $python_exe" ask /run/proctor/io.proctor.Admin

check "in proctord's sandbox, readlink /proc/1/exe (a root process) works" \
    box_run systemctl start exe-with-ptrace.service
check "… and fails without CAP_SYS_PTRACE, which is why the unit keeps it" \
    sh -c "! nsenter -t $BOX_PID -m -p systemctl start exe-without-ptrace.service 2>/dev/null"
check "the probe's logger works inside the same sandbox (journal target detected)" \
    box_run systemctl start sandboxed-log.service
box_journal_sync
# Found by the probe's own fields, not by -u: journald attributes a message to its unit
# through the sender's cgroup, which it can no longer read once a short-lived sender exited.
check "the denial in the journal carries MESSAGE_ID, APP_ID, RULE and DECISION" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -o json MESSAGE_ID=b1a2f28f21824eeaa03407dabfd373a4 SESSION=s-1 POLICY_VERSION=2026-11-29.1 |
        $python -c 'import json,sys; r=json.loads(sys.stdin.readline()); assert (r[\"APP_ID\"], r[\"RULE\"], r[\"DECISION\"], r[\"PRIORITY\"]) == (\"com.example.notes\", \"apps.com.example.notes.dlp.clipboard\", \"deny\", \"4\"), r'"
check "journalctl --update-catalog accepts proctor.catalog" box_run journalctl --update-catalog
check "every MESSAGE_ID is in the compiled catalog" \
    sh -c "list=\$(nsenter -t $BOX_PID -m -p journalctl --list-catalog); for id in $(echo $ids_in_code); do echo \"\$list\" | grep -q \$id || { echo missing \$id; exit 1; }; done"
check "journalctl -x explains the denial with its fields filled in" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -x MESSAGE_ID=b1a2f28f21824eeaa03407dabfd373a4 SESSION=s-1 POLICY_VERSION=2026-11-29.1 |
        grep -F 'Proctor denied clipboard.copy for com.example.notes (rule apps.com.example.notes.dlp.clipboard)'"

box_teardown
check_output "the host's /etc/group, /etc/passwd, /etc/proctor and /var/lib are as before" "$host_etc_before" \
    sh -c "sha256sum /etc/group /etc/passwd; ls -d /etc/proctor /var/lib/proctor /var/lib/private/proctor 2>&1"
box_finish
