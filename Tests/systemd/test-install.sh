#!/bin/bash
# scripts/install.sh into a temporary DESTDIR: what lands where, ExecStart= rewritten for
# PREFIX, an administrator's edited policy kept (the new default beside it as .dist), and
# the manual pages and completions where man, bash-completion and fish look for them.
# Usage (from the repo root): Tests/systemd/test-install.sh "$(swift build --show-bin-path)"
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
BIN_DIR=$(cd "${1:?usage: $0 BIN_DIR (swift build --show-bin-path)}" && pwd)

scratch=$(mktemp -d "$BIN_DIR/install-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Stand-in binaries and policy: the script's job is copying, not what it copies. The manual
# pages are the real ones, built by scripts/build-man.sh from the built proctorctl.
mkdir -p "$scratch/build" "$scratch/policy"
for binary in proctord proctorctl; do printf '#!/bin/sh\necho %s\n' "$binary" > "$scratch/build/$binary"; done
chmod +x "$scratch/build/"*
"$repo/scripts/build-man.sh" "$BIN_DIR" "$scratch/man" || { echo "FAIL: scripts/build-man.sh"; exit 1; }
echo '{"schema": 1, "version": "1"}' > "$scratch/policy/00-default.json"
echo '{"schema": 1, "version": "e"}' > "$scratch/policy/10-example.json"

run_install() {  # run_install DESTDIR PREFIX
    DESTDIR=$1 PREFIX=$2 BUILD_DIR="$scratch/build" POLICY_DIR="$scratch/policy" MAN_DIR="$scratch/man" "$repo/scripts/install.sh"
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
check "proctor-metrics.service and .timer, proctord-mdm.socket installed, the service naming the installed proctorctl" \
    sh -c "test -f '$dest/usr/lib/systemd/system/proctor-metrics.timer' -a -f '$dest/usr/lib/systemd/system/proctord-mdm.socket' &&
           grep -qF '/usr/bin/proctorctl metrics > ' '$dest/usr/lib/systemd/system/proctor-metrics.service'"
check "the installed units pass systemd-analyze verify" \
    sh -c "cd '$dest/usr/lib/systemd/system' && sed -i 's|^ExecStart=.*|ExecStart=$BIN_DIR/systemdkit-probe serve|' proctord.service &&
           out=\$(systemd-analyze verify --man=no proctord.service proctord.socket proctord-admin.socket proctor-metrics.timer proctord-mdm.socket 2>&1) && [ -z \"\$out\" ] || { echo \"\$out\"; false; }"
for page in man1/proctorctl.1 man5/proctor-policy.5 man5/proctord.conf.5 man8/proctord.8; do
    check "$page installed and rendered by man without warnings" \
        sh -c "out=\$(MANWIDTH=80 man --warnings -l '$dest/usr/share/man/$page' 2>&1 >/dev/null) && [ -z \"\$out\" ] || { echo \"\$out\"; false; }"
done
check_output "man finds proctord(8) in PREFIX/share/man, as the unit's Documentation= says" "proctord(8)" \
    sh -c "MANPATH='$dest/usr/share/man' man -w proctord | xargs basename | sed 's/\.8\$/(8)/'"
check "bash-completion loads the installed completion on demand" \
    env XDG_DATA_DIRS="$dest/usr/share" bash -c \
        '. /usr/share/bash-completion/bash_completion && __load_completion proctorctl && complete -p proctorctl | grep -q _proctorctl'
check "zsh completion in Debian's vendor-completions" test -f "$dest/usr/share/zsh/vendor-completions/_proctorctl"
check_output "fish finds the installed completion (vendor_completions.d)" "status" \
    env XDG_DATA_DIRS="$dest/usr/share" HOME="$scratch" PATH="$BIN_DIR:$PATH" fish -c 'complete -C "proctorctl statu" | cut -f1'
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
    sh -c "DESTDIR='$scratch/local' PREFIX=/usr/local BUILD_DIR='$scratch/build' POLICY_DIR='$scratch/policy' MAN_DIR='$scratch/man' '$repo/scripts/install.sh' >/dev/null &&
           grep '^ExecStart=' '$scratch/local/usr/local/lib/systemd/system/proctord.service'"
rm "$scratch/man/proctord.8"
check "a missing manual page is a clear error" \
    sh -c "! out=\$(DESTDIR='$scratch/noman' BUILD_DIR='$scratch/build' MAN_DIR='$scratch/man' '$repo/scripts/install.sh' 2>&1) &&
           echo \"\$out\" | grep -F 'proctord.8 is missing' && test ! -e '$scratch/noman'"
rm "$scratch/build/proctorctl"
check "a missing binary is a clear error, not a partial install" \
    sh -c "! out=\$(DESTDIR='$scratch/partial' BUILD_DIR='$scratch/build' '$repo/scripts/install.sh' 2>&1) &&
           echo \"\$out\" | grep -F 'proctorctl is missing' && test ! -e '$scratch/partial'"
check "PREFIX=/usr/local puts the zsh completion in site-functions" test -f "$scratch/local/usr/local/share/zsh/site-functions/_proctorctl"
check "a relative PREFIX is refused" \
    sh -c "! DESTDIR='$scratch/rel' PREFIX=usr BUILD_DIR='$scratch/build' '$repo/scripts/install.sh' 2>/dev/null"

echo "$BOX_PASSED passed, $BOX_FAILED failed"
[ "$BOX_FAILED" = 0 ]
