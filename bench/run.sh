#!/bin/sh
# make bench: the Python engines into bench/.venv (from Debian's python3), then every figure.
# QUICK=1 for a smoke run. Expects a release build (make release).
set -eu
cd "$(dirname "$0")/.."
venv=bench/.venv
if [ ! -f $venv/.installed ] || [ bench/requirements.txt -nt $venv/.installed ]; then
    /usr/bin/python3 -m venv $venv
    $venv/bin/pip install -q -r bench/requirements.txt
    touch $venv/.installed
fi
# The Cedar and Rego translations on the cases docs/engine.md defines (a fraction of a second).
if ! tests=$($venv/bin/python -m unittest discover -s bench -p 'test_*.py' 2>&1); then
    echo "$tests" >&2
    exit 1
fi
echo "bench/test_engines.py: $(echo "$tests" | tail -1)"
bin=$(${SWIFT:-swift} build -c release --show-bin-path)
quick=
[ "${QUICK:-}" = 1 ] && quick=--quick
exec $venv/bin/python bench/run.py --bin "$bin" $quick
