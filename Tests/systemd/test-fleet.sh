#!/bin/bash
# Fleet parts in a systemd box (docs/fleet.md): proctord, which has no network, pulls a signed
# bundle from a real HTTPS server through proctord-mdm.socket (systemd-socket-proxyd) with the
# proctord-fleet.conf drop-in, and cannot without it; the exposure of both units with and
# without the drop-in; a root-only client key by path, which the dynamic user cannot read,
# refused with the advice to pass it as a credential; the status reports proctord POSTs back to
# the server (StatusURL=) with the fields docs/fleet.md lists; proctor-metrics.timer runs
# proctor-metrics.service, which writes `proctorctl metrics` into the textfile directory, and Debian's real prometheus-node-exporter
# serves it; proctord's journal shipped by systemd-journal-upload to systemd-journal-remote with
# its fields and MESSAGE_IDs.
# Usage (from the repo root): Tests/systemd/test-fleet.sh "$(swift build --show-bin-path)"
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
BIN_DIR=$(cd "${1:?usage: $0 BIN_DIR (swift build --show-bin-path)}" && pwd)
for binary in proctord proctorctl; do
    [ -x "$BIN_DIR/$binary" ] || { echo "build $binary first: swift build --product $binary" >&2; exit 2; }
done
python=$(command -v /usr/bin/python3 || command -v python3)
python_exe=$("$python" -c 'import os, sys; print(os.path.realpath(sys.executable))')
node_exporter=/usr/bin/prometheus-node-exporter
textfile_dir=/var/lib/prometheus/node-exporter
app=io.proctor.fleet-test
agent=/run/proctor/io.proctor.Agent
id_denied=b1a2f28f21824eeaa03407dabfd373a4
# A free port on the host's loopback (the box shares the host's network).
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

box_new fleet "$BIN_DIR"
# The MDM: bundle_server.py on the host's 127.0.0.1 (the box shares the host's network), with a
# CA and certificate for "localhost" it makes with openssl, serving a bundle signed here.
mdm_dir="$BOX_ROOT/mdm"
mkdir -p "$mdm_dir"
exec {mdm_out}< <(exec "$python" "$repo/Tests/ProctorFleetTests/bundle_server.py" "$mdm_dir")
mdm_pid=$!
trap 'status=$?; kill $mdm_pid 2>/dev/null; (exit $status); box_teardown' EXIT
read -r -t 60 ready mdm_port _ <&$mdm_out
[ "${ready:-}" = READY ] || { echo "bundle_server.py did not start" >&2; exit 1; }
"$BIN_DIR/proctorctl" policy keygen --out "$BOX_ROOT/mdm-key" > /dev/null
mkdir -p "$(box_etc proctor/keys.d)"
cp "$BOX_ROOT/mdm-key.pub" "$(box_etc proctor/keys.d/mdm.pub)"
cp "$mdm_dir/ca.pem" "$(box_etc proctor/mdm-ca.pem)"
# The machine's client key and certificate as docs/fleet.md installs them: root's, the key 0600.
install -m 0600 -o root -g root "$mdm_dir/client.key" "$(box_etc proctor/fleet-client.key)"
install -m 0644 -o root -g root "$mdm_dir/client.pem" "$(box_etc proctor/fleet-client.pem)"
fleet_conf() {  # fleet_conf [EXTRA_SOURCE_LINES] — proctord.conf pulling from the MDM
    printf '[Source]\nBundleURL=https://localhost:%s/bundle\nPollIntervalSec=3600\nCACertificate=/etc/proctor/mdm-ca.pem\n' "$mdm_port"
    [ -z "${1:-}" ] || echo "$1"
}
fleet_conf "UnixSocket=/run/proctor/mdm
StatusURL=https://localhost:$mdm_port/report" > "$(box_etc proctor/proctord.conf)"

box_proctor_units "$BIN_DIR/proctord"
box_unit "$repo/systemd/proctord-mdm.socket"
box_unit "$repo/systemd/proctord-mdm.service"
mkdir -p "$BOX_ROOT/units/proctord.service.d" "$BOX_ROOT/units/proctord-mdm.service.d"
box_unit "$repo/systemd/proctord-fleet.conf" proctord.service.d/fleet.conf
# The drop-in's LoadCredential= example, uncommented as docs/fleet.md says: checked by
# systemd-analyze below, and systemd starts proctord with it. Not used by proctord here: systemd
# 252 in this box (PID 1 of nested namespaces) cannot give the dynamic user its credentials
# (test-proctord.sh, "machine key"); reading them is tested in Tests/python/test_fleet.py.
{ echo '[Service]'; sed -n 's/^#\(LoadCredential=.*\)$/\1/p' "$repo/systemd/proctord-fleet.conf"; } \
    > "$BOX_ROOT/units/proctord.service.d/credentials.conf"
printf '[Service]\nEnvironment=PROCTOR_MDM=127.0.0.1:%s\n' "$mdm_port" > "$BOX_ROOT/units/proctord-mdm.service.d/mdm.conf"
sed "s|/usr/local/bin/proctorctl|$BIN_DIR/proctorctl|" "$repo/systemd/proctor-metrics.service" > "$BOX_ROOT/units/proctor-metrics.service"
box_unit "$repo/systemd/proctor-metrics.timer"
box_unit /lib/systemd/system/prometheus-node-exporter.service
exporter_port=$(free_port)
mkdir -p "$(box_etc default)" "$(box_etc proctor/policy.d)"
# Debian's unit and its /etc/default file; only the textfile collector, on a free port.
echo "ARGS=\"--web.listen-address=127.0.0.1:$exporter_port --collector.disable-defaults --collector.textfile\"" \
    > "$(box_etc default/prometheus-node-exporter)"
fleet_policy() {  # fleet_policy VERSION
    echo "{ \"schema\": 1, \"version\": \"$1\", \"apps\": { \"$app\": { \"state\": \"authorized\",
      \"match\": { \"executable\": \"$python_exe\", \"users\": [\"root\"] }, \"dlp\": { \"print\": \"block\" } } } }"
}
fleet_policy fleet-test.1 > "$(box_etc proctor/policy.d/50-fleet-test.json)"
fleet_policy fleet-test.2 > "$BOX_ROOT/signed.json"
"$BIN_DIR/proctorctl" policy sign --key "$BOX_ROOT/mdm-key" --serial 7 "$BOX_ROOT/signed.json" > "$mdm_dir/bundle"

# --- Exposure (systemd-analyze security, offline, on the units as installed) -----------
exposure() {  # exposure FOLDER UNIT — the overall exposure systemd-analyze gives UNIT in FOLDER
    (cd "$1" && systemd-analyze security --offline=true "$2" 2>/dev/null) |
        sed -n "s/.*Overall exposure level for $2: \([0-9.]*\).*/\1/p"
}
at_most() { awk -v e="${1:-99}" -v l="$2" 'BEGIN { exit !(e <= l) }'; }
mkdir -p "$BOX_ROOT/plain-units"
cp "$repo/systemd/proctord.service" "$BOX_ROOT/plain-units/"
plain=$(exposure "$BOX_ROOT/plain-units" proctord.service)
with_dropin=$(exposure "$BOX_ROOT/units" proctord.service)
forwarder=$(exposure "$BOX_ROOT/units" proctord-mdm.service)
check "proctord.service exposure ${plain:-unknown} ≤ 1.0 without the fleet drop-in" at_most "$plain" 1.0
check "… and ${with_dropin:-unknown} ≤ 1.0 with it (no network for proctord either way)" at_most "$with_dropin" 1.0
check "proctord-mdm.service, which alone has the network, ${forwarder:-unknown} ≤ 1.5" at_most "$forwarder" 1.5
check "systemd-analyze verify accepts the fleet units and the drop-in" \
    sh -c "cd '$BOX_ROOT/units' && out=\$(systemd-analyze verify --man=no proctord.service proctord-mdm.socket proctord-mdm.service 2>&1) &&
           [ -z \"\$out\" ] || { echo \"\$out\"; false; }"

if ! box_boot; then
    check "the box boots" false
    box_finish
fi
box_proctor_accounts || check "sysusers.d and tmpfiles.d entries apply in the box" false
# What prometheus-node-exporter's package makes: the textfile directory, root's, 0755.
box_run install -d -m 0755 "$textfile_dir"

call() {  # call SOCKET CALL… — Varlink calls on one connection, inside the box (varlink-call.py)
    box_run timeout 30 "$python" "$here/varlink-call.py" "$@"
}
box_run systemctl start proctord.socket proctord-admin.socket
fleet_fields() {  # fleet_fields — "SERIAL RESULT FAILURES VERSION" from proctorctl status --json
    box_run timeout 30 "$BIN_DIR/proctorctl" status --json | "$python" -c 'import json, sys
r = json.load(sys.stdin); f = r["fleet"]
print(f.get("lastAppliedSerial"), f.get("lastFetchResult"), f["fetchFailures"], r["policy"]["version"])'
}

# --- Pulling through the forwarder ------------------------------------------------------
pulled() { fleet_fields | grep -q '^7 applied 0 fleet-test.2$'; }
check "proctord (PrivateNetwork=yes) pulls and applies serial 7 through /run/proctor/mdm" box_wait_for 30 pulled
check_output "… the socket admits only proctor-mdm (0660), proctord's through the drop-in" "660 root proctor-mdm" \
    box_run stat -c '%a %U %G' /run/proctor/mdm
check_output "… and the forwarder was proctord-mdm.service, started by its socket" "active" \
    box_run systemctl is-active proctord-mdm.service

# --- Mutual TLS: a root-only key file is no way to give the dynamic user its key ---------
fleet_error() {  # fleet_error — "REASON MESSAGE" of fleet.lastError in proctorctl status --json
    box_run timeout 30 "$BIN_DIR/proctorctl" status --json | "$python" -c 'import json, sys
e = json.load(sys.stdin)["fleet"].get("lastError") or {}
print(e.get("reason"), e.get("message"))'
}
fleet_conf "UnixSocket=/run/proctor/mdm
ClientCertificate=/etc/proctor/fleet-client.pem
ClientKey=/etc/proctor/fleet-client.key" | box_write /etc/proctor/proctord.conf
box_run timeout 30 systemctl reload proctord.service
path_key_refused() {
    fleet_error | grep -q '^configuration .*ClientKey=: cannot open /etc/proctor/fleet-client.key: Permission denied.*give the key as a credential, ClientKey=@NAME with LoadCredential=NAME:/etc/proctor/fleet-client.key'
}
check "a root-only client key by path is refused at reload: the dynamic user cannot open it, proctord says to use a credential" \
    box_wait_for 20 path_key_refused
check_output "… and the settings in force stay: the last pull still applied, nothing failed" "7 applied 0 fleet-test.2" fleet_fields

# --- Status reports back to the MDM (StatusURL=, through the same forwarder) -------------
mdm_log() {  # mdm_log — what bundle_server.py received: its requests and the documents POSTed
    curl -sf --max-time 10 --cacert "$mdm_dir/ca.pem" "https://localhost:$mdm_port/log"
}
reported_serial_7() {
    mdm_log | "$python" -c 'import json, sys
sys.exit(not any(post["status"]["fleet"].get("lastAppliedSerial") == 7 for post in json.load(sys.stdin)["posts"]))'
}
check "proctord POSTs a status report to StatusURL= once serial 7 is applied" box_wait_for 30 reported_serial_7
check "… as JSON, with the machine id, when it was sent, Status (policy, fleet, counts) and every known app" \
    "$python" - "$(mdm_log)" "$(box_run cat /etc/machine-id)" "$app" <<'PY'
import json, re, sys
log, machine_id, app = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
reports = [request for request in log["requests"] if request.get("method") == "POST"]
assert reports and all(r["path"] == "/report" and r["contentType"] == "application/json" for r in reports), reports
post = next(post for post in log["posts"] if post["status"]["fleet"].get("lastAppliedSerial") == 7)
assert set(post) == {"machineId", "sentAt", "status", "apps", "appsLeftOut"}, sorted(post)
assert post["appsLeftOut"] == 0 and len(post["apps"]) == post["status"]["counts"]["appsKnown"], post["appsLeftOut"]
assert post["machineId"] == machine_id and re.fullmatch("[0-9a-f]{32}", machine_id), (post["machineId"], machine_id)
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", post["sentAt"]), post["sentAt"]
status = post["status"]
assert status["policy"]["version"] == "fleet-test.2" and len(status["policy"]["sha256"]) == 64, status["policy"]
assert status["fleet"]["lastFetchResult"] == "applied", status["fleet"]
assert status["fleet"]["statusReports"]["statusUrl"].endswith("/report"), status["fleet"]
assert {"appsKnown", "sessions", "decisionsAllowed"} <= set(status["counts"]), status["counts"]
apps = {detail["appId"]: detail for detail in post["apps"]}
assert apps[app]["state"] == "authorized" and apps[app]["inPolicy"] is True, apps
PY
report_fields() {  # report_fields — "SENT RESULT" of fleet.statusReports in proctorctl status --json
    box_run timeout 30 "$BIN_DIR/proctorctl" status --json | "$python" -c 'import json, sys
r = json.load(sys.stdin)["fleet"]["statusReports"]
print("sent" if r["reportsSent"] >= 1 else "none", r.get("lastReportResult"), r.get("lastReportError"))'
}
check_output "… and Status counts it delivered: statusReports says sent, with no failure" "sent sent None" report_fields

# One registration refused (not in policy), one app registered, one print denied, one allowed launch.
call "$agent" 'io.proctor.Agent.Register={"appId": "com.example.unknown"}' > /dev/null 2>&1
call "$agent" "io.proctor.Agent.Register={\"appId\": \"$app\"}" 'io.proctor.Agent.Decide={"session": "@session", "action": "print"}' \
    > /dev/null

# --- Metrics through the timer, the service and node_exporter ---------------------------
check "proctor-metrics.timer starts, and it is what triggers proctor-metrics.service" \
    sh -c "nsenter -t $BOX_PID -m -p systemctl start proctor-metrics.timer &&
           nsenter -t $BOX_PID -m -p systemctl show -P Triggers proctor-metrics.timer | grep -qx proctor-metrics.service"
check "proctor-metrics.service runs to success (root without capabilities, no network, read-only but the textfile directory)" \
    box_run timeout 60 systemctl start proctor-metrics.service
check_output "… leaving proctor.prom, mode 0644, root's, and no temporary file" \
    "proctor.prom 644 root" sh -c "nsenter -t $BOX_PID -m -p sh -c 'cd $textfile_dir && stat -c \"%n %a %U\" *'"
metrics_file=$(box_run cat "$textfile_dir/proctor.prom")
check "proctor.prom parses as Prometheus text (prometheus_client) with the counters of the calls above" \
    "$repo/.venv/bin/python" - "$metrics_file" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for family in text_string_to_metric_families(sys.argv[1]) for s in family.samples}
assert samples[("proctor_decisions_total", (("action", "print"), ("result", "denied")))] == 1, samples
assert samples[("proctor_decisions_total", (("action", "launch"), ("result", "allowed")))] == 1, samples
assert samples[("proctor_registrations_refused_total", (("reason", "unknown-app"),))] == 1, samples
assert samples[("proctor_storage_failures_total", ())] == 0, samples
PY
box_run systemctl start prometheus-node-exporter.service
scrape() { curl -sf --max-time 10 "http://127.0.0.1:$exporter_port/metrics"; }
check "Debian's prometheus-node-exporter (User=prometheus) answers on 127.0.0.1:$exporter_port" box_wait_for 20 scrape
scraped=$(scrape)
check "node_exporter serves proctord's metrics from the textfile, labels intact, with no textfile scrape error" \
    "$repo/.venv/bin/python" - "$scraped" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
families = {family.name: family for family in text_string_to_metric_families(sys.argv[1])}
samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
assert samples[("node_textfile_scrape_error", ())] == 0, samples.get(("node_textfile_scrape_error", ()))
assert samples[("proctor_decisions_total", (("action", "print"), ("result", "denied")))] == 1
assert samples[("proctor_registrations_refused_total", (("reason", "unknown-app"),))] == 1
assert families["proctor_decisions"].type == "counter" and families["proctor_sessions"].type == "gauge"
assert any(name == "node_textfile_mtime_seconds" and dict(labels).get("file", "").endswith("proctor.prom")
           for name, labels in samples), "no mtime for proctor.prom"
PY
# The next run replaces the file by rename: a new inode, never a file half written.
inode_before=$(box_run stat -c %i "$textfile_dir/proctor.prom")
call "$agent" "io.proctor.Agent.Register={\"appId\": \"$app\"}" 'io.proctor.Agent.Decide={"session": "@session", "action": "print"}' \
    > /dev/null
box_run timeout 60 systemctl start proctor-metrics.service
check "a second run replaces proctor.prom by rename (new inode) with the new count, which node_exporter serves" \
    sh -c "[ \"\$(nsenter -t $BOX_PID -m -p stat -c %i $textfile_dir/proctor.prom)\" != '$inode_before' ] &&
           curl -sf --max-time 10 http://127.0.0.1:$exporter_port/metrics | grep -qx 'proctor_decisions_total{action=\"print\",result=\"denied\"} 2'"
exposure=$(cd "$BOX_ROOT/units" && systemd-analyze security --offline=true proctor-metrics.service 2>/dev/null |
    sed -n 's/.*Overall exposure level for proctor-metrics.service: \([0-9.]*\).*/\1/p')
check "systemd-analyze security: proctor-metrics.service exposure ${exposure:-unknown} ≤ 1.0" \
    awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 1.0) }'

# --- Without UnixSocket=, proctord has no way to the server ------------------------------
fleet_conf | box_write /etc/proctor/proctord.conf
box_run timeout 30 systemctl reload proctord.service
unreachable() { fleet_fields | grep -q '^7 failed 1 '; }
check "without UnixSocket= the same proctord cannot reach 127.0.0.1: its own, empty network namespace" \
    box_wait_for 30 unreachable

# --- The journal shipped with systemd-journal-upload to systemd-journal-remote ------------
if [ -x /lib/systemd/systemd-journal-remote ] && [ -x /lib/systemd/systemd-journal-upload ]; then
    remote_port=$(free_port)
    box_run mkdir -p /run/journal-remote
    box_run systemd-run --quiet --unit=journal-remote-test /lib/systemd/systemd-journal-remote \
        --split-mode=none --listen-http=127.0.0.1:$remote_port --output=/run/journal-remote/remote.journal
    box_wait_for 10 sh -c "ss -ltnH 'sport = :$remote_port' | grep -q ."
    box_journal_sync
    check "systemd-journal-upload sends the box's journal to systemd-journal-remote over HTTP" \
        box_run timeout 60 /lib/systemd/systemd-journal-upload --url=http://127.0.0.1:$remote_port --follow=no \
            --save-state=/run/journal-upload.state
    check "the received journal holds proctord's denial by MESSAGE_ID, its fields intact" \
        sh -c "nsenter -t $BOX_PID -m -p journalctl --no-pager -o json --file=/run/journal-remote/remote.journal MESSAGE_ID=$id_denied |
            '$python' -c 'import json, sys
r = json.loads(sys.stdin.readline())
assert (r[\"APP_ID\"], r[\"ACTION\"], r[\"DECISION\"], r[\"_SYSTEMD_UNIT\"]) == (\"$app\", \"print\", \"denied\", \"proctord.service\"), r
assert r[\"RULE\"].endswith(\"dlp.print\"), r'"
else
    check "systemd-journal-remote is installed (Debian package systemd-journal-remote, make deps)" false
fi

box_finish
