#!/bin/sh
# Runs built fuzz targets one after another: `Fuzz/run.sh SECONDS [TARGET...]` (no target:
# every one `Fuzz/build.sh` builds).
# SECONDS > 0: each target fuzzes that long, starting from its seeds in Fuzz/corpus/<target>
#   (read only) and the inputs earlier runs found in .build/fuzz/corpus/<target>, where new
#   ones go; a crashing input lands in .build/fuzz/artifacts/. The last line per target sums
#   up the run (executions, executions per second).
# SECONDS = 0: each target runs every seed input once (what `make test` does), in a PID
#   namespace where thread ids are reused at once (Fuzz/reuse-thread-ids.sh): a leak report
#   that needs a reused id, which a long run meets only after half an hour, shows there.
# Exits non-zero at the first target that crashes, leaks, times out or breaks a property.
# FUZZ_TIMEOUT (default 10): seconds one input may take before it counts as a hang. The
# clock is wall time: under nice 19 on a saturated machine a fuzzer can wait longer than
# that for a CPU (a 0.3 ms varlink input was once reported after 11 s), so raise it there.
# FUZZ_KIND=volume runs the build without AddressSanitizer (Fuzz/build.sh); both kinds grow
# the same corpus in .build/fuzz/corpus.
set -eu
cd "$(dirname "$0")/.."
timeout=${FUZZ_TIMEOUT:-10}
seconds=$1
shift
[ $# -gt 0 ] || set -- $(Fuzz/build.sh --list)
out=.build/fuzz
binaries=$out
[ "${FUZZ_KIND:-asan}" = volume ] && binaries=.build/fuzz-volume
# Swift's own crash backtracer reads memory AddressSanitizer guards and reports that instead
# of the crash; libFuzzer's report (stack, crashing input) is the one wanted.
export SWIFT_BACKTRACE=enable=no
export LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan-suppressions.txt"
# Allocation stacks five frames deep in reports rather than 30: unwinding and storing the
# stack of every allocation was a tenth of the policy targets' time (Swift allocates a lot).
# Not for info-plist, whose leak suppression names a frame deep inside Foundation.
asan_options() {
    case "$1" in
        info-plist) echo "${ASAN_OPTIONS:-}" ;;
        *) echo "${ASAN_OPTIONS:-malloc_context_size=5}" ;;
    esac
}
# The JSON targets mutate with JSON's tokens, the handlers target with the protocol's.
# libFuzzer checks for leaks after every input that allocated more than it freed, which
# costs a scan of the whole heap: Foundation leaks an error object for every plist it
# refuses (Fuzz/lsan-suppressions.txt), and the handlers target's daemon keeps state from
# input to input, so both check leaks only at exit (a third of the handlers target's
# executions per second otherwise).
target_flags() {
    case "$1" in
        json | policy | policy-dir) echo "-dict=Fuzz/json.dict" ;;
        handlers) echo "-dict=Fuzz/handlers.dict -detect_leaks=0" ;;
        info-plist) echo "-detect_leaks=0" ;;
    esac
}

for target in "$@"; do
    binary=$binaries/$target-fuzz
    seeds=Fuzz/corpus/$target
    if [ "$seconds" -eq 0 ]; then
        mkdir -p "$out/artifacts"
        # shellcheck disable=SC2086
        ASAN_OPTIONS=$(asan_options "$target") Fuzz/reuse-thread-ids.sh "$binary" -runs=0 $(target_flags "$target") -artifact_prefix="$out/artifacts/$target-" "$seeds" 2>"$out/$target-seeds.log" ||
            { tail -n 60 "$out/$target-seeds.log" >&2; echo "$target: FAILED on a seed input" >&2; exit 1; }
        echo "$target: $(ls "$seeds" | wc -l) seed inputs, no crash"
        continue
    fi
    mkdir -p "$out/corpus/$target" "$out/artifacts" "$out/logs"
    # info-plist runs in segments: Foundation's leak (see target_flags) grows a process by
    # ~1 GB a minute, past libFuzzer's 2 GB memory limit.
    segment=$seconds
    [ "$target" = info-plist ] && [ "$seconds" -gt 120 ] && segment=120
    remaining=$seconds executions=0
    while [ "$remaining" -gt 0 ]; do
        length=$((remaining < segment ? remaining : segment))
        log=$out/logs/$target-${FUZZ_KIND:-asan}-$(date -u +%Y%m%dT%H%M%S).log
        status=0
        # shellcheck disable=SC2086
        ASAN_OPTIONS=$(asan_options "$target") "$binary" -max_total_time="$length" -timeout="$timeout" -print_final_stats=1 $(target_flags "$target") \
            -artifact_prefix="$out/artifacts/$target-" "$out/corpus/$target" "$seeds" >"$log" 2>&1 || status=$?
        executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        executions=$((executions + ${executed:-0}))
        if [ "$status" -ne 0 ]; then
            tail -n 40 "$log" >&2
            echo "$target: FAILED after $executions executions (log: $log)" >&2
            exit 1
        fi
        remaining=$((remaining - length))
    done
    echo "$target: ${seconds}s, $executions executions, $((executions / seconds))/s, no crash (last log: $log)"
done
