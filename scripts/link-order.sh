#!/bin/sh
# make link-order: profiles the release proctord in BIN_DIR under callgrind while
# proctor-bench's quick `roundtrip` calls it (Decide, allowed and denied), then writes the
# hot functions' link order to OUTPUT (scripts/link-order.py says how they are chosen).
# Only the event loop's run and the log writer's batches are counted, not the start-up.
set -eu
[ $# -eq 2 ] || { echo "usage: link-order.sh BIN_DIR OUTPUT" >&2; exit 2; }
bin=$(cd "$1" && pwd)
output=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/proctord" <<WRAPPER
#!/bin/sh
exec valgrind --tool=callgrind --demangle=no --callgrind-out-file=$work/callgrind.out \\
    --toggle-collect='*EventLoopC3run*' --toggle-collect='*drainOnce*' "$bin/proctord" "\$@"
WRAPPER
chmod +x "$work/proctord"
"$bin/proctor-bench" roundtrip --quick --proctord "$work/proctord" >/dev/null
"$(dirname "$0")/link-order.py" "$work/callgrind.out" "$output"
