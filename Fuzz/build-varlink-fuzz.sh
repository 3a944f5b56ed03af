#!/bin/sh
# Builds the libFuzzer binary for the Varlink parsers: JSONCore and Varlink are compiled
# with the fuzzer's coverage instrumentation (and AddressSanitizer) into static libraries,
# then linked with Fuzz/VarlinkFuzz.swift. Output: .build/fuzz/varlink-fuzz
set -eu
cd "$(dirname "$0")/.."
out=.build/fuzz
mkdir -p "$out"
flags="-swift-version 6 -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault
       -sanitize=fuzzer,address -parse-as-library -O -g -use-ld=lld -I $out -L $out"
for module in JSONCore Varlink; do
    swiftc $flags -module-name "$module" -emit-module -emit-module-path "$out/$module.swiftmodule" \
        -emit-library -static -o "$out/lib$module.a" Sources/"$module"/*.swift
done
swiftc $flags -lVarlink -lJSONCore Fuzz/VarlinkFuzz.swift -o "$out/varlink-fuzz"
echo "built $out/varlink-fuzz"
