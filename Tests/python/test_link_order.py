"""scripts/link-order.py: which of proctord's functions a callgrind profile makes hot, and in
what order the link order file lists them (the release build's `--section-ordering-file`)."""
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "scripts", "link-order.py")

# A profile as callgrind writes one with --demangle=no: names compressed to "(id)" after
# their first use, calls followed by their inclusive cost line, a recursive call's "'2".
PROFILE = """\
version: 1
creator: callgrind-3.19.0
events: Ir

ob=(1) /build/release/proctord
fl=(1) loop.swift
fn=(1) $s7LinuxIO9EventLoopC3runyyF
0 10
cfn=(2) $s7LinuxIO16StreamConnectionC13readAvailableyyF
calls=100 0
0 90000
cfn=(3) perRequestCheap
calls=95 0
0 950
cfn=(5) denialOnly
calls=30 0
0 3000
cfn=(6) rare
calls=10 0
0 5000
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfn=(7) memcpy
calls=100 0
0 800

fn=(2)
0 40000
cfn=(4) perRequestHot
calls=100 0
0 20000
cfn=(8) swift_release'2
calls=40 0
0 400

fn=(3)
0 950
fn=(4)
0 20000
fn=(5)
0 3000
fn=(6)
0 5000
ob=(2)
fn=(7)
0 800
ob=(1)
fn=(8)
0 400
"""


def link_order(tmp_path, profile):
    source = tmp_path / "callgrind.out"
    source.write_text(profile)
    output = tmp_path / "link-order.txt"
    subprocess.run([sys.executable, SCRIPT, str(source), str(output)], check=True, capture_output=True, text=True)
    lines = output.read_text().splitlines()
    return [line for line in lines if not line.startswith("#")], [line for line in lines if line.startswith("#")]


def test_every_request_path_first_then_the_others_hottest_first(tmp_path):
    sections, header = link_order(tmp_path, PROFILE)
    assert header, "the file says what it is and how it is made"
    functions = [
        # Called for nine requests in ten or more, by own instructions.
        "$s7LinuxIO16StreamConnectionC13readAvailableyyF",
        "perRequestHot",
        "perRequestCheap",
        # At least a fifth as often: a denial's path; the recursion's "'2" is the same function.
        "denialOnly",
        "swift_release",
    ]
    # Each under the three section names a profile-guided build may give it.
    assert sections == [prefix + function for function in functions for prefix in (".text.hot.", ".text.", ".text.unlikely.")]


def test_rare_functions_and_other_objects_are_left_out(tmp_path):
    sections, _ = link_order(tmp_path, PROFILE)
    assert not any(name.endswith(".rare") for name in sections)  # 10 calls for 100 requests
    assert not any(name.endswith(".memcpy") for name in sections)  # libc's: not proctord's to place
    assert not any(name.endswith("runyyF") for name in sections)  # called once, outside the window


def test_a_profile_without_requests_is_refused(tmp_path):
    source = tmp_path / "callgrind.out"
    source.write_text("version: 1\nevents: Ir\nob=(1) /x/proctord\nfn=(1) main\n0 5\n")
    result = subprocess.run([sys.executable, SCRIPT, str(source), str(tmp_path / "out")], capture_output=True, text=True)
    assert result.returncode != 0
    assert "readAvailable" in result.stderr
