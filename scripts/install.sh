#!/bin/bash
# Installs Proctor: binaries, manual pages, shell completions, systemd units, sysusers.d and
# tmpfiles.d entries, the journal catalog and the default policy. `make install` runs it.
#
#   DESTDIR    staging root for packaging (default: empty, the live system)
#   PREFIX     installation prefix (default /usr/local); systemd reads units, sysusers.d,
#              tmpfiles.d and catalogs from /usr/local/lib and /usr/lib, so use one of those
#   BUILD_DIR  the built binaries (default: .build/release of this checkout)
#   MAN_DIR    the built manual pages (default: .build/man of this checkout; `make man`)
#   POLICY_DIR the default policy drop-ins (default: config/policy.d of this checkout)
#
# Policy goes to $DESTDIR/etc/proctor/policy.d and never replaces an administrator's file:
# an absent file is installed, an identical one left alone, and a changed one kept while
# the new default is written beside it as NAME.dist.
# Installing into the live system (no DESTDIR) then creates the proctor-admin group and
# /etc/proctor, compiles the catalog and reloads systemd; it does not start anything.
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
BUILD_DIR=${BUILD_DIR:-$repo/.build/release}
POLICY_DIR=${POLICY_DIR:-$repo/config/policy.d}
MAN_DIR=${MAN_DIR:-$repo/.build/man}

bindir=$PREFIX/bin
unitdir=$PREFIX/lib/systemd/system
sysusersdir=$PREFIX/lib/sysusers.d
tmpfilesdir=$PREFIX/lib/tmpfiles.d
catalogdir=$PREFIX/lib/systemd/catalog
mandir=$PREFIX/share/man
bashcompletiondir=$PREFIX/share/bash-completion/completions
# zsh looks in Debian's vendor-completions under /usr, in site-functions under /usr/local.
if [ "$PREFIX" = /usr ]; then
    zshcompletiondir=$PREFIX/share/zsh/vendor-completions
else
    zshcompletiondir=$PREFIX/share/zsh/site-functions
fi
fishcompletiondir=$PREFIX/share/fish/vendor_completions.d
manpages=(proctorctl.1 proctor-policy.5 proctord.8 proctord.conf.5)
policydir=/etc/proctor/policy.d

fail() { echo "install.sh: $*" >&2; exit 1; }
say() { echo "install.sh: $*"; }

case "$PREFIX" in
    /*) ;;
    *) fail "PREFIX must be an absolute path, not '$PREFIX'" ;;
esac
case "$PREFIX" in
    /usr|/usr/local) ;;
    *) say "note: systemd does not look for units, sysusers.d, tmpfiles.d or catalogs under $PREFIX/lib; link them into /etc yourself" ;;
esac
[ -d "$BUILD_DIR" ] || fail "no build folder $BUILD_DIR (run 'make release' or set BUILD_DIR)"
for required in proctord proctorctl; do
    [ -x "$BUILD_DIR/$required" ] || fail "$BUILD_DIR/$required is missing (run 'make release')"
done
for page in "${manpages[@]}"; do
    [ -f "$MAN_DIR/$page" ] || fail "$MAN_DIR/$page is missing (run 'make man' or set MAN_DIR)"
done

install -d "$DESTDIR$bindir" "$DESTDIR$unitdir" "$DESTDIR$sysusersdir" "$DESTDIR$tmpfilesdir" \
    "$DESTDIR$catalogdir" "$DESTDIR$policydir" "$DESTDIR$mandir/man1" "$DESTDIR$mandir/man5" "$DESTDIR$mandir/man8" \
    "$DESTDIR$bashcompletiondir" "$DESTDIR$zshcompletiondir" "$DESTDIR$fishcompletiondir"

for binary in proctord proctorctl proctor-demo; do
    if [ -x "$BUILD_DIR/$binary" ]; then
        install -m 0755 "$BUILD_DIR/$binary" "$DESTDIR$bindir/$binary"
        say "installed $bindir/$binary"
    fi
done

for page in "${manpages[@]}"; do
    install -m 0644 "$MAN_DIR/$page" "$DESTDIR$mandir/man${page##*.}/$page"
done
say "installed the manual pages ${manpages[*]} in $mandir"
install -m 0644 "$repo/completions/proctorctl.bash" "$DESTDIR$bashcompletiondir/proctorctl"
install -m 0644 "$repo/completions/_proctorctl" "$DESTDIR$zshcompletiondir/_proctorctl"
install -m 0644 "$repo/completions/proctorctl.fish" "$DESTDIR$fishcompletiondir/proctorctl.fish"
say "installed proctorctl's completions for bash, zsh and fish"

# The unit names the installed binary (without DESTDIR: the path it will have when running).
sed "s|^ExecStart=/usr/local/bin/proctord|ExecStart=$bindir/proctord|" "$repo/systemd/proctord.service" \
    > "$DESTDIR$unitdir/proctord.service.new"
chmod 0644 "$DESTDIR$unitdir/proctord.service.new"
mv "$DESTDIR$unitdir/proctord.service.new" "$DESTDIR$unitdir/proctord.service"
grep -qx "ExecStart=$bindir/proctord" "$DESTDIR$unitdir/proctord.service" ||
    fail "could not point ExecStart= of proctord.service at $bindir/proctord"
# proctord-mdm.socket/.service: the way to the MDM for machines that pull (docs/fleet.md),
# enabled by the drop-in systemd/proctord-fleet.conf only where BundleURL= is set.
install -m 0644 "$repo/systemd/proctord.socket" "$repo/systemd/proctord-admin.socket" "$repo/systemd/proctor-metrics.timer" \
    "$repo/systemd/proctord-mdm.socket" "$repo/systemd/proctord-mdm.service" "$DESTDIR$unitdir/"
sed "s|/usr/local/bin/proctorctl|$bindir/proctorctl|g" "$repo/systemd/proctor-metrics.service" \
    > "$DESTDIR$unitdir/proctor-metrics.service.new"
chmod 0644 "$DESTDIR$unitdir/proctor-metrics.service.new"
mv "$DESTDIR$unitdir/proctor-metrics.service.new" "$DESTDIR$unitdir/proctor-metrics.service"
grep -q "$bindir/proctorctl metrics" "$DESTDIR$unitdir/proctor-metrics.service" ||
    fail "could not point proctor-metrics.service at $bindir/proctorctl"
install -m 0644 "$repo/systemd/proctor.sysusers" "$DESTDIR$sysusersdir/proctor.conf"
install -m 0644 "$repo/systemd/proctor.tmpfiles" "$DESTDIR$tmpfilesdir/proctor.conf"
install -m 0644 "$repo/systemd/proctor.catalog" "$DESTDIR$catalogdir/proctor.catalog"
say "installed units in $unitdir, sysusers.d and tmpfiles.d entries, and the journal catalog"

shopt -s nullglob
policies=("$POLICY_DIR"/*.json)
[ ${#policies[@]} -gt 0 ] || say "note: no default policy in $POLICY_DIR, none installed"
for policy in "${policies[@]}"; do
    name=$(basename "$policy")
    target="$DESTDIR$policydir/$name"
    if [ ! -e "$target" ]; then
        install -m 0644 "$policy" "$target"
        say "installed $policydir/$name"
    elif cmp -s "$policy" "$target"; then
        say "$policydir/$name is up to date"
    else
        install -m 0644 "$policy" "$target.dist"
        say "kept your edited $policydir/$name; the new default is $policydir/$name.dist (compare them with 'proctorctl policy diff')"
    fi
done

if [ -z "$DESTDIR" ]; then
    systemd-sysusers "$sysusersdir/proctor.conf"
    systemd-tmpfiles --create "$tmpfilesdir/proctor.conf"
    journalctl --update-catalog
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload
    fi
    say "done; start with: systemctl enable --now proctord.socket proctord-admin.socket"
    say "metrics for prometheus-node-exporter's textfile collector: systemctl enable --now proctor-metrics.timer"
fi
