#!/bin/bash
# Proves the real-systemd box of lib.sh: a Type=notify service, its STATUS= line, journald
# inside the box receiving SystemdKit's JournalSink records, and journalctl -x finding
# their catalog text.
# Usage (from the repo root): Tests/systemd/test-harness.sh "$(swift build --show-bin-path)"
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
BIN_DIR=$(cd "${1:?usage: $0 BIN_DIR (swift build --show-bin-path)}" && pwd)
probe="$BIN_DIR/systemdkit-probe"
[ -x "$probe" ] || { echo "build systemdkit-probe first: swift build --product systemdkit-probe" >&2; exit 2; }

message_id=$(systemd-id128 new)
host_catalog=/var/lib/systemd/catalog/database
host_catalog_before=$(stat -c %Y:%s "$host_catalog" 2>/dev/null || echo absent)
host_tmp_marker=$(mktemp /tmp/proctor-harness-marker.XXXXXX)
box_new harness "$BIN_DIR"

# A Type=notify service that takes a second before READY=1 and marks when it got there.
cat > "$BOX_ROOT/notify-demo.sh" <<'SCRIPT'
#!/bin/sh
sleep 1
touch /run/notify-demo.ready
systemd-notify --ready --status="serving 3 widgets"
exec sleep infinity
SCRIPT
chmod +x "$BOX_ROOT/notify-demo.sh"
box_write_unit notify-demo.service <<UNIT
[Unit]
Description=Type=notify demo for the harness test
[Service]
Type=notify
# systemd-notify is a child of the main process, so its message must be accepted.
NotifyAccess=all
ExecStart=$BOX_ROOT/notify-demo.sh
UNIT

# The probe as a service: standard error goes to journald, so JOURNAL_STREAM is set and
# the auto log target must pick the journal. It lingers so that journald, however late it
# reads the record, still finds the process and its unit.
box_write_unit probe-log.service <<UNIT
[Unit]
Description=SystemdKit log target detection under systemd
[Service]
Type=oneshot
Environment=PROBE_LINGER_MS=2000
ExecStart=$probe log auto $message_id warning "Probe under systemd" APP_ID=com.example.service
UNIT

cat > "$BOX_ROOT/probe.catalog" <<CATALOG
-- $message_id
Subject: Harness probe message
Defined-By: proctor-tests

The systemdkit-probe logged this through SystemdKit's JournalSink.
CATALOG
box_catalog "$BOX_ROOT/probe.catalog"

if ! box_boot; then
    check "the box boots" false
    box_finish
fi
check "the box boots with journald running" box_run systemctl is-active --quiet systemd-journald.service

box_run systemctl start --no-block notify-demo.service
check "before READY=1 the notify service is activating" \
    test "$(box_run systemctl show -P ActiveState notify-demo.service)" = activating
started=$(date +%s%N)
box_run timeout 20 systemctl start notify-demo.service
waited_ms=$((($(date +%s%N) - started) / 1000000))
check "systemctl start returns only after READY=1" \
    box_run sh -c 'test -e /run/notify-demo.ready && systemctl is-active --quiet notify-demo.service'
check "the STATUS= line shows in systemctl status" \
    sh -c "nsenter -t $BOX_PID -m -p systemctl status notify-demo.service | grep -F 'Status: \"serving 3 widgets\"'"
check "systemctl start waited for the service's READY (≥ 500 ms after --no-block start; took $waited_ms ms)" \
    test "$waited_ms" -ge 500

check "JournalSink writes to the box's journald (forced journal target)" \
    box_run "$probe" log journal "$message_id" notice "Probe forced to the journal" APP_ID=com.example.forced "TARGET=two
lines"
journal_json() { box_run journalctl --no-pager -o json "MESSAGE_ID=$message_id" "$@"; }
box_journal_sync
check "the journal holds the record with MESSAGE_ID, PRIORITY, SYSLOG_IDENTIFIER and fields" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -o json MESSAGE_ID=$message_id APP_ID=com.example.forced |
        python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); assert r[\"MESSAGE\"]==\"Probe forced to the journal\", r; assert r[\"PRIORITY\"]==\"5\"; assert r[\"SYSLOG_IDENTIFIER\"]==\"systemdkit-probe\"; assert r[\"TARGET\"]==\"two\\nlines\", r[\"TARGET\"]'"

# 1 200 000 × 18 bytes, 21.6 MB: more than the 16 MiB datagram of root's forced send buffer, so
# the record travels in a sealed memory file; journalctl needs --all to print so large a field.
check "a record larger than a datagram reaches the journal through a memory file" \
    box_run env PROBE_REPEAT_MESSAGE=1200000 "$probe" log journal "$message_id" info "large record line
" APP_ID=com.example.large
box_journal_sync
check "… intact: the journal's MESSAGE is all 21.6 MB of it, with its fields" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager --all -o json MESSAGE_ID=$message_id APP_ID=com.example.large |
        python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); m=r[\"MESSAGE\"]; assert m==\"large record line\\n\"*1200000, (len(m), m[:40]); assert r[\"PRIORITY\"]==\"6\"; assert r[\"SYSLOG_IDENTIFIER\"]==\"systemdkit-probe\"'"

check "outside a journal stream the auto target is stderr" \
    sh -c "nsenter -t $BOX_PID -m -p $probe log auto $message_id info 'Probe on a pipe' 2>&1 | grep -Fx 'target=stderr' "
check "as a service (JOURNAL_STREAM set) the auto target is the journal" \
    box_run systemctl start probe-log.service
box_journal_sync
check "the service's record carries its unit and fields" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -o json MESSAGE_ID=$message_id _SYSTEMD_UNIT=probe-log.service |
        python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); assert r[\"APP_ID\"]==\"com.example.service\", r; assert r[\"PRIORITY\"]==\"4\"'"
check "the service's stdout said target=journal" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -o cat _SYSTEMD_UNIT=probe-log.service | grep -Fx 'target=journal'"

check "journalctl --update-catalog accepts the catalog" box_run journalctl --update-catalog
check "journalctl -x shows the catalog text" \
    sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -x MESSAGE_ID=$message_id | grep -F 'logged this through SystemdKit'"

# journald stopped while a program logs: the sink's failure is counted and reported, not hidden.
box_run systemctl stop systemd-journald.socket systemd-journald-dev-log.socket systemd-journald.service 2>/dev/null
check "with journald stopped, the journal sink reports the failure (the errno of its send)" \
    sh -c "nsenter -t $BOX_PID -m -p $probe log journal $message_id err 'Nobody listens' 2>&1 >/dev/null |
        grep -E '^systemdkit-probe: sending to the journal failed: .* \((E[A-Z0-9]+|errno [0-9]+)\)$'"
check "… and the probe exits non-zero" sh -c "! nsenter -t $BOX_PID -m -p $probe log journal $message_id err x >/dev/null 2>&1"

box_pid=$BOX_PID
box_teardown
check "the box's systemd is gone after teardown" sh -c "! kill -0 $box_pid 2>/dev/null"
check "the host's /tmp is untouched" test -e "$host_tmp_marker"
check "the host's catalog database is untouched" \
    test "$(stat -c %Y:%s "$host_catalog" 2>/dev/null || echo absent)" = "$host_catalog_before"
check "the host's journal has no record of the probe" \
    sh -c "! journalctl --no-pager -q MESSAGE_ID=$message_id 2>/dev/null | grep -q ."
rm -f "$host_tmp_marker"

# Every way out of a test script ends its box: an error exit, and a SIGTERM mid-test.
abort_script() {  # abort_script HOW — boots a box, records its PID 1 and folder, leaves by HOW
    bash -c '. "$1/lib.sh"; box_new abort "$2"; box_boot || exit 9
             echo "$BOX_PID $BOX_ROOT" > "$2/abort-box.txt"
             case $3 in error) exit 3 ;; signal) box_run sleep 60 & wait $! ;; esac' _ "$here" "$BIN_DIR" "$1" >/dev/null 2>&1 &
}
for how in error signal; do
    rm -f "$BIN_DIR/abort-box.txt"
    abort_script "$how"
    script_pid=$!
    box_wait_for 30 test -s "$BIN_DIR/abort-box.txt"
    [ "$how" = signal ] && kill -TERM "$script_pid"
    wait "$script_pid"
    read -r abort_pid abort_root < "$BIN_DIR/abort-box.txt"
    check "after an exit by $how the box's systemd ($abort_pid) is gone" sh -c "! kill -0 ${abort_pid:-0} 2>/dev/null"
    check "… and its folder is removed" test ! -e "${abort_root:-/nonexistent}"
done
rm -f "$BIN_DIR/abort-box.txt"
box_finish
