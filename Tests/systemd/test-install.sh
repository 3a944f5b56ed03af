#!/bin/bash
# scripts/install.sh into a temporary DESTDIR: what lands where, ExecStart= rewritten for
# PREFIX, and an administrator's edited policy kept (the new default beside it as .dist).
# Usage (from the repo root): Tests/systemd/test-install.sh "$(swift build --show-bin-path)"
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
BIN_DIR=$(cd "${1:?usage: $0 BIN_DIR (swift build --show-bin-path)}" && pwd)

scratch=$(mktemp -d "$BIN_DIR/install-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Stand-in binaries and policy: the script's job is copying, not what it copies.
mkdir -p "$scratch/build" "$scratch/policy"
for binary in proctord proctorctl; do printf '#!/bin/sh\necho %s\n' "$binary" > "$scratch/build/$binary"; done
chmod +x "$scratch/build/"*
echo '{"schema": 1, "version": "1"}' > "$scratch/policy/00-default.json"
echo '{"schema": 1, "version": "e"}' > "$scratch/policy/10-example.json"

run_install() {  # run_install DESTDIR PREFIX
    DESTDIR=$1 PREFIX=$2 BUILD_DIR="$scratch/build" POLICY_DIR="$scratch/policy" "$repo/scripts/install.sh"
}
dest="$scratch/dest"
check "install.sh succeeds into an empty DESTDIR" run_install "$dest" /usr
check "binaries in PREFIX/bin, executable" test -x "$dest/usr/bin/proctord" -a -x "$dest/usr/bin/proctorctl"
check "proctor-demo is optional" test ! -e "$dest/usr/bin/proctor-demo"
check_output "ExecStart= names the installed proctord" "ExecStart=/usr/bin/proctord" \
    grep '^ExecStart=' "$dest/usr/lib/systemd/system/proctord.service"
check "units, sysusers.d, tmpfiles.d and catalog installed" \
    test -f "$dest/usr/lib/systemd/system/proctord.socket" -a -f "$dest/usr/lib/systemd/system/proctord-admin.socket" \
        -a -f "$dest/usr/lib/sysusers.d/proctor.conf" -a -f "$dest/usr/lib/tmpfiles.d/proctor.conf" \
        -a -f "$dest/usr/lib/systemd/catalog/proctor.catalog"
check "the installed units pass systemd-analyze verify" \
    sh -c "cd '$dest/usr/lib/systemd/system' && sed -i 's|^ExecStart=.*|ExecStart=$BIN_DIR/systemdkit-probe serve|' proctord.service &&
           out=\$(systemd-analyze verify --man=no proctord.service proctord.socket proctord-admin.socket 2>&1) && [ -z \"\$out\" ] || { echo \"\$out\"; false; }"
check "default policy installed under DESTDIR/etc" \
    cmp "$scratch/policy/00-default.json" "$dest/etc/proctor/policy.d/00-default.json"

echo '{"schema": 1, "version": "edited by the admin"}' > "$dest/etc/proctor/policy.d/00-default.json"
echo '{"schema": 1, "version": "2"}' > "$scratch/policy/00-default.json"
output=$(run_install "$dest" /usr)
check_output "a second install keeps the admin's edited file" '{"schema": 1, "version": "edited by the admin"}' \
    cat "$dest/etc/proctor/policy.d/00-default.json"
check "… and puts the new default beside it as .dist" cmp "$scratch/policy/00-default.json" "$dest/etc/proctor/policy.d/00-default.json.dist"
check "… and says so" sh -c 'printf "%s\n" "$1" | grep -F "kept your edited /etc/proctor/policy.d/00-default.json"' _ "$output"
check "an unchanged file gets no .dist" test ! -e "$dest/etc/proctor/policy.d/10-example.json.dist"

check_output "PREFIX=/usr/local rewrites ExecStart= accordingly" "ExecStart=/usr/local/bin/proctord" \
    sh -c "DESTDIR='$scratch/local' PREFIX=/usr/local BUILD_DIR='$scratch/build' POLICY_DIR='$scratch/policy' '$repo/scripts/install.sh' >/dev/null &&
           grep '^ExecStart=' '$scratch/local/usr/local/lib/systemd/system/proctord.service'"
rm "$scratch/build/proctorctl"
check "a missing binary is a clear error, not a partial install" \
    sh -c "! out=\$(DESTDIR='$scratch/partial' BUILD_DIR='$scratch/build' '$repo/scripts/install.sh' 2>&1) &&
           echo \"\$out\" | grep -F 'proctorctl is missing' && test ! -e '$scratch/partial'"
check "a relative PREFIX is refused" \
    sh -c "! DESTDIR='$scratch/rel' PREFIX=usr BUILD_DIR='$scratch/build' '$repo/scripts/install.sh' 2>/dev/null"

echo "$BOX_PASSED passed, $BOX_FAILED failed"
[ "$BOX_FAILED" = 0 ]
