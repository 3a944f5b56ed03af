#!/bin/sh
# make profile: runs proctor-bench's quick daemon workloads (allowed and denied Decide calls,
# concurrent clients, pushes, start-ups from a snapshot and from JSON, reloads) against
# INSTRUMENTED, a proctord built to count what it executes into RAW_DIR, then merges the
# counts into OUTPUT, the profile release builds optimise with. Sparse: functions the
# workloads never ran are left out, so the compiler optimises them as it would without a
# profile instead of as cold code.
set -eu
[ $# -eq 5 ] || { echo "usage: profile.sh BIN_DIR INSTRUMENTED RAW_DIR LLVM_PROFDATA OUTPUT" >&2; exit 2; }
bin=$1 instrumented=$2 raw=$3 profdata=$4 output=$5
"$bin/proctor-bench" roundtrip throughput push startup reload --quick --proctord "$instrumented" >/dev/null
set -- "$raw"/*.profraw
[ -f "$1" ] || { echo "profile.sh: $instrumented wrote no counts into $raw" >&2; exit 1; }
"$profdata" merge --sparse -o "$output" "$@"
echo "profile.sh: $output from $# proctord runs"
