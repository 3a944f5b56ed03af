#!/bin/sh
# Runs a command in a PID namespace of its own in which every new thread takes the lowest
# free id from 100, so thread ids are reused at once: `Fuzz/reuse-thread-ids.sh Fuzz/run.sh
# 60 handlers`. On the machine, ids wrap at pid_max (32768 on Debian) and a thread's id
# comes back only after a busy half hour: a fault that needs a reused id (LeakSanitizer
# once took the live thread that held a logger's drainer for a dead one of the same id and
# did not scan it, Fuzz/README.md, seventh session) shows here within a minute.
# Needs unprivileged user namespaces (`unshare --user`) and python3. The command runs as
# root of the namespace: uid 0 mapped to the caller, so files it writes are the caller's.
set -eu
exec unshare --user --map-root-user --pid --fork --mount-proc sh -c '
    python3 -c "
import time
while True:
    with open(\"/proc/sys/kernel/ns_last_pid\", \"w\") as f:
        f.write(\"99\")
    time.sleep(0.005)
" &
    setter=$!
    status=0
    "$@" || status=$?
    kill $setter
    exit $status
' reuse-thread-ids "$@"
