#!/bin/sh
# Builds libFuzzer binaries: `Fuzz/build.sh TARGET...` (no argument: every target;
# `--list`: print the targets).
#   json        the JSON parser alone, and its canonical round trip (Fuzz/JSONFuzz.swift)
#   policy      the policy parser, merge, engine, canonical form (Fuzz/PolicyFuzz.swift)
#   policy-dir  a policy.d directory of files read with PolicyDirectory.load
#   varlink     the Varlink frame decoder, connection state and IDL parser
#   info-plist  ProctorKit's Info.plist reader (InfoPlist.swift, on Foundation)
#   handlers    calls to proctord's Agent and Admin methods, through the real daemon
#   snapshot    the compiled policy in proctord's policy snapshot, decoded and written again
#   snapshot-file  a whole policy.snapshot file: its header, then its body (PolicySnapshot.swift)
# The library modules a target needs are compiled with the fuzzer's coverage
# instrumentation and AddressSanitizer into static libraries (rebuilt only when their
# sources change), then linked with the target's Fuzz/<Name>Fuzz.swift. Everything comes
# from the Swift toolchain: libclang_rt.fuzzer, ASan and lld.
# Output: .build/fuzz/<target>-fuzz. `make fuzz` runs them; see Fuzz/README.md.
# FUZZ_KIND=volume: without AddressSanitizer, into .build/fuzz-volume, for long runs that
# want executions more than memory checks (Fuzz/README.md says what such a build misses).
set -eu
cd "$(dirname "$0")/.."
case "${FUZZ_KIND:-asan}" in
    asan) out=.build/fuzz sanitize=fuzzer,address ;;
    volume) out=.build/fuzz-volume sanitize=fuzzer ;;
    *) echo "FUZZ_KIND is asan (the default) or volume" >&2; exit 2 ;;
esac
mkdir -p "$out"
all_targets="json policy policy-dir varlink info-plist handlers snapshot snapshot-file"

# -I Sources/C… find the module maps of the C libraries the modules import; -package-name
# is SwiftPM's, so `package` declarations are seen across modules.
flags="-swift-version 6 -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault
       -parse-as-library -O -g -use-ld=lld -package-name proctor -I $out -L $out
       -I Sources/CLinux -I Sources/CLandlock -I Sources/CSystemd -I Sources/CSQLite -I Sources/CSodium -I Sources/CCurl"

# The library modules a module needs, in build order, itself last.
module_closure() {
    case "$1" in
        JSONCore) echo "JSONCore" ;;
        ProctorPolicy) echo "JSONCore LinuxIO ProctorPolicy" ;;
        LinuxIO) echo "LinuxIO" ;;
        Varlink) echo "JSONCore LinuxIO Varlink" ;;
        SystemdKit) echo "LinuxIO SystemdKit" ;;
        ProctorStore) echo "JSONCore LinuxIO ProctorPolicy ProctorStore" ;;
        ProctorProtocol) echo "JSONCore LinuxIO ProctorPolicy Varlink ProctorProtocol" ;;
        ProctorCrypto) echo "LinuxIO ProctorCrypto" ;;
        ProctorBundle) echo "JSONCore LinuxIO ProctorPolicy ProctorCrypto ProctorBundle" ;;
        ProctorFleet) echo "LinuxIO ProctorFleet" ;;
        ProctorDaemon)
            echo "JSONCore LinuxIO ProctorPolicy Varlink SystemdKit ProctorStore ProctorProtocol ProctorCrypto ProctorBundle"
            echo "ProctorFleet ProctorDaemon"
            ;;
        *) echo "no fuzz build of module $1" >&2; exit 2 ;;
    esac
}

# Compiles one module into $out/lib<module>.a unless it is newer than its sources and
# than the libraries it depends on. `build_module MODULE edges` compiles it again into
# $out/lib<module>-edges.a with edge coverage and AddressSanitizer but no comparison
# tracing (FUZZ_KIND=asan only): for a target that links the module without fuzzing it.
build_module() {
    module=$1 library="$out/lib$1.a" variant=${2:-}
    module_flags="-sanitize=$sanitize -emit-module -emit-module-path $out/$module.swiftmodule"
    if [ "$variant" = edges ]; then
        library="$out/lib$module-edges.a"
        module_flags="-sanitize=address -sanitize-coverage=edge,inline-8bit-counters,pc-table"
    fi
    dependencies=$(module_closure "$module")
    module_sources="Sources/$module/*.swift" watched="Sources/$module"
    # ProctorProtocol carries its interface files as Swift strings, made at build time by
    # embed-text, and its message types, made from them by generate-messages (SwiftPM's
    # EmbedInterfaces plugin runs both).
    if [ "$module" = ProctorProtocol ]; then
        generated="$out/EmbeddedInterfaces.swift"
        for interface in Sources/ProctorProtocol/Interfaces/*.varlink; do
            generated="$generated $out/messages/$(basename "$interface" .varlink).swift"
        done
        module_sources="$module_sources $generated" watched="$watched $generated"
        # EmbeddedInterfaces.swift is written last: it stands for both.
        if [ ! -f "$out/EmbeddedInterfaces.swift" ] ||
            [ -n "$(find Sources/ProctorProtocol/Interfaces Sources/embed-text Sources/generate-messages \
                -newer "$out/EmbeddedInterfaces.swift")" ]; then
            swiftc -O -o "$out/generate-messages" Sources/generate-messages/*.swift
            mkdir -p "$out/messages"
            "$out/generate-messages" Sources/ProctorProtocol/Interfaces/SwiftMapping.txt "$out/messages" \
                Sources/ProctorProtocol/Interfaces/*.varlink
            swiftc -O -o "$out/embed-text" Sources/embed-text/main.swift
            "$out/embed-text" "$out/EmbeddedInterfaces.swift" Sources/ProctorProtocol/Interfaces/*.varlink
        fi
    fi
    if [ -f "$library" ] && [ -z "$(find $watched -name '*.swift' -newer "$library")" ]; then
        stale=""
        for dependency in $dependencies; do
            [ "$out/lib$dependency.a" -nt "$library" ] && stale=1
        done
        [ -z "$stale" ] && return 0
    fi
    echo "compiling $module${variant:+ ($variant)}"
    # A new archive: swiftc adds to an existing one, which would keep the objects of
    # source files since removed or renamed (duplicate symbols at the link).
    rm -f "$library"
    # shellcheck disable=SC2086
    swiftc $flags $module_flags -module-name "$module" -emit-library -static -o "$library" $module_sources
}

build_target() {
    # sources: the fuzz entry point, plus files compiled into the same module (the
    # Info.plist reader is internal to ProctorKit, which is too heavy to build whole here),
    # plus Fuzz/FuzzCheck.swift, the property checks every target shares.
    case "$1" in
        json) modules="JSONCore" sources="Fuzz/JSONFuzz.swift" ;;
        policy) modules="ProctorPolicy" sources="Fuzz/PolicyFuzz.swift" ;;
        policy-dir) modules="ProctorPolicy" sources="Fuzz/PolicyDirectoryFuzz.swift" ;;
        snapshot) modules="ProctorPolicy" sources="Fuzz/SnapshotFuzz.swift" ;;
        # The file's reader is ProctorDaemon's, which is too heavy to build whole for it.
        snapshot-file) modules="ProctorPolicy" sources="Fuzz/SnapshotFileFuzz.swift Sources/ProctorDaemon/PolicySnapshot.swift" ;;
        varlink) modules="Varlink" sources="Fuzz/VarlinkFuzz.swift" ;;
        handlers) modules="ProctorDaemon" sources="Fuzz/HandlerFuzz.swift" ;;
        info-plist)
            modules=""
            sources="Fuzz/InfoPlistFuzz.swift Sources/ProctorKit/InfoPlist.swift Sources/ProctorKit/Policy/PolicyAppSettings.swift"
            ;;
        *) echo "usage: $0 [$(echo "$all_targets" | tr ' ' '|')]..." >&2; exit 2 ;;
    esac
    # handlers: JSONCore, which the json target fuzzes on its own, without comparison
    # tracing. Its byte-by-byte tests (`byte == "\""`) called libFuzzer's hook for every
    # byte of every message parsed, a tenth of the target's time, and told the mutator nothing
    # about the handlers (Fuzz/README.md, fifth session).
    edges=""
    [ "$1" = handlers ] && [ "$sanitize" = fuzzer,address ] && edges=JSONCore
    libraries=""
    for top in $modules; do
        for module in $(module_closure "$top"); do
            build_module "$module"
            if [ "$module" = "$edges" ]; then
                build_module "$module" edges
                libraries="-l$module-edges $libraries"
            else
                libraries="-l$module $libraries"
            fi
        done
    done
    # shellcheck disable=SC2086
    # The C libraries a module map names are not linked from static libraries by themselves.
    [ "$1" = handlers ] && libraries="$libraries -lsqlite3 -lsodium -lcurl -lswiftSynchronization -lswiftDispatch -ldispatch -lBlocksRuntime"
    # Nor the Swift overlays: ProctorPolicy parses policy.d's drop-ins side by side (Dispatch, Mutex);
    # a Varlink call's sender holds a ProcessHandle, whose exit watch reads an EventLoop (Mutex).
    case "$1" in
        policy|policy-dir|snapshot|snapshot-file) libraries="$libraries -lswiftSynchronization -lswiftDispatch -ldispatch -lBlocksRuntime" ;;
        varlink) libraries="$libraries -lswiftSynchronization" ;;
    esac
    swiftc $flags -sanitize=$sanitize -module-name "$(echo "$1" | tr -d -)fuzz" $libraries -lm Fuzz/FuzzCheck.swift $sources \
        -o "$out/$1-fuzz"
    echo "built $out/$1-fuzz"
}

if [ "${1:-}" = --list ]; then
    echo "$all_targets"
    exit 0
fi
for target in ${*:-$all_targets}; do
    build_target "$target"
done
