#!/bin/bash
# Builds the manual pages from man/*.scd with scdoc into OUT_DIR (`make man` runs it).
# proctorctl(1)'s OPTIONS and COMMANDS sections come from proctorctl's own command table
# (`proctorctl --generate man`), spliced in at the marker line, so the page lists exactly
# the commands and options `proctorctl --help` does.
#
# Usage: scripts/build-man.sh BIN_DIR OUT_DIR     (BIN_DIR holds the built proctorctl)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bin_dir=${1:?usage: $0 BIN_DIR OUT_DIR}
out_dir=${2:?usage: $0 BIN_DIR OUT_DIR}
marker='@PROCTORCTL_REFERENCE@'

fail() { echo "build-man.sh: $*" >&2; exit 1; }

command -v scdoc >/dev/null || fail "scdoc is missing (apt-get install scdoc, or make deps)"
[ -x "$bin_dir/proctorctl" ] || fail "$bin_dir/proctorctl is missing (build it first)"
mkdir -p "$out_dir"
reference=$(mktemp)
trap 'rm -f "$reference"' EXIT
"$bin_dir/proctorctl" --generate man > "$reference"

for source in "$repo"/man/*.scd; do
    page=$(basename "$source" .scd)
    if [ "$page" = proctorctl.1 ]; then
        [ "$(grep -cx "$marker" "$source")" = 1 ] || fail "$source needs the line $marker exactly once"
        sed -e "/^$marker\$/{r $reference" -e 'd}' "$source" | scdoc > "$out_dir/$page.new"
    else
        scdoc < "$source" > "$out_dir/$page.new"
    fi
    mv "$out_dir/$page.new" "$out_dir/$page"
done
