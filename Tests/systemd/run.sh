#!/bin/bash
# Runs every Tests/systemd/test-*.sh against the built binaries and sums their closing lines.
# Usage (from the repo root): Tests/systemd/run.sh "$(swift build --show-bin-path)"
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin_dir=${1:?usage: $0 BIN_DIR (swift build --show-bin-path)}
passed=0 failed=0
for test in "$here"/test-*.sh; do
    echo "== $(basename "$test")"
    output=$("$test" "$bin_dir" 2>&1)
    status=$?
    printf '%s\n' "$output"
    summary=$(printf '%s\n' "$output" | tail -n 1)
    if [[ $summary =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        passed=$((passed + BASH_REMATCH[1]))
        failed=$((failed + BASH_REMATCH[2]))
        [ $status = 0 ] || [ "${BASH_REMATCH[2]}" != 0 ] || failed=$((failed + 1))
    else
        echo "FAILED: $(basename "$test") ended without a summary (exit status $status)"
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
