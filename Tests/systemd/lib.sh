# Tests/systemd/lib.sh — a real systemd, as PID 1 of a fresh PID and mount namespace
# (the recipe of TESTING.md), for tests of Proctor's units, socket activation, sd_notify
# and journal logging. Source it from a bash test script:
#
#   . "$(dirname "$0")/lib.sh"
#   box_new my-test "$BIN_DIR"      # a fresh box folder under BIN_DIR; kill trap installed
#   box_unit path/to/x.service      # copy a unit in (box_write_unit NAME < text to write one)
#   box_catalog systemd/proctor.catalog
#   box_boot x.service              # boot; the box's target Wants= the units named
#   box_run systemctl start x.service
#   check "what is proven" test-command …
#   check_output "what is proven" "expected output" command …
#   box_finish                      # prints "N passed, N failed", kills the box, sets the exit code
#
# Inside the box, /run, /tmp, /var/tmp, /var/log/journal and /var/lib are fresh tmpfs and
# /etc is an overlay whose writes land in the box folder, so nothing a test or a unit does
# (RuntimeDirectory=, StateDirectory=, ConfigurationDirectory=, journald, the catalog
# database) reaches the host. The host's files are read-only from the box's point of view
# only by convention: the box is root, so tests must write through these mounts only.
# The box folder lives beside the built binaries, not in /tmp: the box's /tmp is its own.
# bash runs the teardown trap for a signal only when the foreground command returns, so
# bound every command (timeout 20 systemctl …, box_wait_for) and wait on long ones with
# `cmd & wait $!`.

BOX_PID=""            # PID (host view) of the box's systemd
BOX_LAUNCHER_PID=""   # the unshare process whose child that systemd is
BOX_ROOT=""           # the box folder: units/, catalog/, etc-upper/, boot.sh, console.log
BOX_NAME=""
BOX_BIN_DIR=""        # the built binaries (the box folder lives inside it)
BOX_BIN_GIVEN=""      # the same folder as the test named it (perhaps through a symlink)
# Where services in the box find the built binaries: the unit's sandbox hides /tmp,
# /var/tmp, /home and /root (PrivateTmp=, ProtectHome=), where a checkout may well be.
BOX_SERVICE_BIN=/mnt/proctor-bin
BOX_PASSED=0
BOX_FAILED=0
BOX_BOOT_TIMEOUT=${BOX_BOOT_TIMEOUT:-30}
BOX_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)   # the checkout lib.sh belongs to

# box_new NAME BIN_DIR — makes the box folder and installs the teardown trap.
box_new() {
    BOX_NAME=$1
    local bin_dir=$2
    [ "$(id -u)" = 0 ] || { echo "systemd box tests need root" >&2; exit 2; }
    [ -d "$bin_dir" ] || { echo "no such folder of built binaries: $bin_dir" >&2; exit 2; }
    BOX_BIN_GIVEN=${bin_dir%/}
    BOX_BIN_DIR=$(cd "$bin_dir" && pwd -P)
    BOX_ROOT=$(mktemp -d "$BOX_BIN_DIR/systemd-box.$BOX_NAME.XXXXXX")
    mkdir -p "$BOX_ROOT/units" "$BOX_ROOT/catalog" "$BOX_ROOT/etc-upper" "$BOX_ROOT/etc-work"
    cp /usr/lib/systemd/catalog/*.catalog "$BOX_ROOT/catalog/"
    # journald, and the standard targets that units' default dependencies name.
    local unit
    for unit in systemd-journald.service systemd-journald.socket systemd-journald-dev-log.socket \
                sysinit.target basic.target sockets.target paths.target timers.target slices.target \
                shutdown.target; do
        cp "/lib/systemd/system/$unit" "$BOX_ROOT/units/"
    done
    trap box_teardown EXIT
    trap 'exit 130' INT TERM HUP
}

# box_unit FILE [NAME] — copies a unit file into the box (as NAME if given).
box_unit() {
    cp "$1" "$BOX_ROOT/units/${2:-$(basename "$1")}"
}

# box_write_unit NAME — writes a unit file into the box from standard input.
box_write_unit() {
    cat > "$BOX_ROOT/units/$1"
}

# box_proctor_units EXEC_START [SED_EXPRESSION…] — the project's units (systemd/) in the box,
# with proctord.service's ExecStart= replaced (e.g. "$BIN_DIR/proctord" or a stand-in)
# and any extra sed expressions applied to it (e.g. 's/^WatchdogSec=.*/WatchdogSec=3s/').
box_proctor_units() {
    local exec_start=$1 expression
    shift
    local arguments=(-e "s|^ExecStart=.*|ExecStart=$exec_start|")
    for expression in "$@"; do arguments+=(-e "$expression"); done
    sed "${arguments[@]}" "$BOX_REPO/systemd/proctord.service" > "$BOX_ROOT/units/proctord.service"
    cp "$BOX_REPO/systemd/proctord.socket" "$BOX_REPO/systemd/proctord-admin.socket" "$BOX_ROOT/units/"
}

# box_proctor_accounts — after box_boot: the proctor-admin group (sysusers.d) and
# /etc/proctor/policy.d (tmpfiles.d), created in the box's /etc overlay.
box_proctor_accounts() {
    box_run systemd-sysusers "$BOX_REPO/systemd/proctor.sysusers" 2>/dev/null &&
        box_run systemd-tmpfiles --create "$BOX_REPO/systemd/proctor.tmpfiles"
}

# box_catalog FILE — adds a journal catalog file; `journalctl --update-catalog` inside the
# box compiles it into the box's own (tmpfs) catalog database.
box_catalog() {
    cp "$1" "$BOX_ROOT/catalog/"
}

# box_etc PATH — the file or folder in the box's /etc overlay at /etc/PATH, for a test to
# fill before (or after) booting: `mkdir -p "$(box_etc proctor/policy.d)"`.
box_etc() {
    echo "$BOX_ROOT/etc-upper/$1"
}

# box_write PATH — after box_boot: writes standard input to PATH inside the box. A file of
# the /etc overlay changes through the box's /etc, never in its upper folder behind the
# mounted overlay's back (overlayfs may go on showing the file it cached).
box_write() {
    box_run sh -c 'cat > "$1"' box_write "$1"
}

# box_boot UNIT… — boots the box with a target that Wants= the units named and journald,
# and waits (bounded by BOX_BOOT_TIMEOUT seconds) until systemd has finished starting them.
box_boot() {
    {
        echo "[Unit]"
        echo "Description=Proctor test box ($BOX_NAME)"
        echo "Wants=systemd-journald.service systemd-journald.socket systemd-journald-dev-log.socket $*"
        echo "After=systemd-journald.service"
    } > "$BOX_ROOT/units/box-$BOX_NAME.target"
    # Units (and their drop-ins, units/NAME.d/*.conf) name the built binaries where the
    # services can see them.
    find "$BOX_ROOT/units" -type f -exec sed -i -e "s|$BOX_BIN_GIVEN/|$BOX_SERVICE_BIN/|g" -e "s|$BOX_BIN_DIR/|$BOX_SERVICE_BIN/|g" {} +
    cat > "$BOX_ROOT/boot.sh" <<BOOT
#!/bin/bash
set -e
mount -t tmpfs tmpfs /run
# A checkout (or build folder) under /tmp, /var/tmp or /var/lib would vanish behind the
# box's fresh tmpfs there, binaries and box folder with it: park it in the box's /run
# first and bind it back to the same path afterwards.
keep=()
for path in $BOX_REPO $BOX_BIN_DIR; do
    case "\$path" in /tmp/*|/var/tmp/*|/var/lib/*)
        mkdir -p "/run/.box-keep\$path" && mount --bind "\$path" "/run/.box-keep\$path"
        keep+=("\$path") ;;
    esac
done
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /var/tmp
mkdir -p /var/log/journal && mount -t tmpfs tmpfs /var/log/journal
mount -t tmpfs tmpfs /var/lib
for path in "\${keep[@]}"; do
    mkdir -p "\$path" && mount --bind "/run/.box-keep\$path" "\$path"
done
mount -t tmpfs tmpfs /mnt && mkdir -p $BOX_SERVICE_BIN && mount --bind $BOX_BIN_DIR $BOX_SERVICE_BIN
mount -t overlay overlay -o lowerdir=/etc,upperdir=$BOX_ROOT/etc-upper,workdir=$BOX_ROOT/etc-work /etc
mount --bind $BOX_ROOT/catalog /usr/lib/systemd/catalog
export SYSTEMD_UNIT_PATH=$BOX_ROOT/units
exec /lib/systemd/systemd --system --unit=box-$BOX_NAME.target
BOOT
    chmod +x "$BOX_ROOT/boot.sh"
    unshare --pid --fork --mount --mount-proc --propagation private "$BOX_ROOT/boot.sh" \
        > "$BOX_ROOT/console.log" 2>&1 &
    BOX_LAUNCHER_PID=$!
    local deadline=$((SECONDS + BOX_BOOT_TIMEOUT))
    while [ -z "$BOX_PID" ]; do
        BOX_PID=$(pgrep -P "$BOX_LAUNCHER_PID" | head -n 1)
        [ -n "$BOX_PID" ] && break
        kill -0 "$BOX_LAUNCHER_PID" 2>/dev/null || { box_fail_boot "the box exited while starting"; return 1; }
        [ $SECONDS -lt $deadline ] || { box_fail_boot "no PID 1 appeared"; return 1; }
        sleep 0.05
    done
    # systemctl answers once PID 1's private socket exists; then wait for the start-up jobs.
    local state
    while :; do
        state=$(box_run systemctl is-system-running 2>/dev/null)
        case "$state" in running|degraded) return 0 ;; esac
        kill -0 "$BOX_PID" 2>/dev/null || { box_fail_boot "the box's systemd exited"; return 1; }
        [ $SECONDS -lt $deadline ] || { box_fail_boot "boot did not finish within ${BOX_BOOT_TIMEOUT}s (state: ${state:-no answer})"; return 1; }
        sleep 0.1
    done
}

box_fail_boot() {
    echo "box $BOX_NAME: $1; its console said:" >&2
    sed 's/^/  | /' "$BOX_ROOT/console.log" >&2
}

# box_run COMMAND… — runs COMMAND inside the box (its mounts, its PID 1, its /run).
box_run() {
    nsenter -t "$BOX_PID" -m -p -- "$@"
}

# box_journal_sync — returns once the box's journald has stored every message sent to it
# before the call (journalctl --sync): a record a program sent just before it exited may
# otherwise still sit in journald's socket when a test looks for it.
box_journal_sync() {
    box_run timeout 20 journalctl --sync
}

# box_wait_for SECONDS COMMAND… — retries COMMAND (on the host; wrap box_run yourself) until
# it succeeds or SECONDS pass; returns its last status.
box_wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.1
    done
}

# check DESCRIPTION COMMAND… — one test: COMMAND's exit status decides; output of a failure
# is shown.
check() {
    local description=$1 output
    shift
    if output=$("$@" 2>&1); then
        BOX_PASSED=$((BOX_PASSED + 1))
        echo "ok: $description"
    else
        BOX_FAILED=$((BOX_FAILED + 1))
        echo "FAILED: $description"
        printf '%s\n' "$output" | sed 's/^/  | /'
    fi
}

# check_output DESCRIPTION EXPECTED COMMAND… — one test: COMMAND must print exactly EXPECTED.
check_output() {
    local description=$1 expected=$2 actual
    shift 2
    actual=$("$@" 2>&1)
    if [ "$actual" = "$expected" ]; then
        BOX_PASSED=$((BOX_PASSED + 1))
        echo "ok: $description"
    else
        BOX_FAILED=$((BOX_FAILED + 1))
        echo "FAILED: $description"
        echo "  | expected: $expected"
        printf '%s\n' "$actual" | sed '1s/^/  | actual:   /; 2,$s/^/  |           /'
    fi
}

# box_teardown — kills the box's PID 1 (the kernel then ends every process in its PID
# namespace), waits for it and removes the box folder. Runs from the EXIT trap, so every
# way out of a test script ends the box.
box_teardown() {
    local status=$?
    if [ -n "$BOX_PID" ]; then
        kill -KILL "$BOX_PID" 2>/dev/null
    fi
    if [ -n "$BOX_LAUNCHER_PID" ]; then
        kill -KILL "$BOX_LAUNCHER_PID" 2>/dev/null
        wait "$BOX_LAUNCHER_PID" 2>/dev/null
    fi
    if [ -n "$BOX_PID" ]; then
        # unshare's reaping of the namespace can outlive it by a moment.
        local tries=0
        while kill -0 "$BOX_PID" 2>/dev/null && [ $tries -lt 100 ]; do sleep 0.05; tries=$((tries + 1)); done
    fi
    BOX_PID="" BOX_LAUNCHER_PID=""
    if [ -n "$BOX_ROOT" ] && [ -z "${BOX_KEEP:-}" ]; then
        rm -rf "$BOX_ROOT"
    fi
    return $status
}

# box_finish — prints the closing line and exits non-zero when any check failed.
box_finish() {
    echo "$BOX_PASSED passed, $BOX_FAILED failed"
    [ "$BOX_FAILED" = 0 ]
    exit $?
}
