#!/bin/sh
# Builds a libFuzzer binary: `Fuzz/build.sh varlink` (Varlink frame decoder, connection
# state, IDL parser) or `Fuzz/build.sh policy` (policy parser, merge, engine, canonical
# form). The modules a target needs are compiled with the fuzzer's coverage instrumentation
# and AddressSanitizer into static libraries, then linked with Fuzz/<Name>Fuzz.swift.
# Output: .build/fuzz/<target>-fuzz. Run: .build/fuzz/policy-fuzz -max_total_time=60 config/examples
set -eu
cd "$(dirname "$0")/.."
case "${1:-}" in
    varlink) modules="JSONCore LinuxIO Varlink" source=Fuzz/VarlinkFuzz.swift ;;
    policy) modules="JSONCore LinuxIO ProctorPolicy" source=Fuzz/PolicyFuzz.swift ;;
    *) echo "usage: $0 varlink|policy" >&2; exit 2 ;;
esac
out=.build/fuzz
mkdir -p "$out"
flags="-swift-version 6 -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault
       -sanitize=fuzzer,address -parse-as-library -O -g -use-ld=lld -I $out -I Sources/CLinux -L $out"
libraries=""
for module in $modules; do
    swiftc $flags -module-name "$module" -emit-module -emit-module-path "$out/$module.swiftmodule" \
        -emit-library -static -o "$out/lib$module.a" Sources/"$module"/*.swift
    libraries="-l$module $libraries"
done
swiftc $flags $libraries -lm "$source" -o "$out/$1-fuzz"
echo "built $out/$1-fuzz"
