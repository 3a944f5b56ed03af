"""`make release` optimises with bench/proctord.profdata when the toolchain's llvm-profdata
reads it, and builds without it (saying so) when it does not (Makefile, PROFILE_FLAGS)."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def planned_release(*arguments):
    """What `make release` would run (`make -n`), and the release stamp it would write."""
    result = subprocess.run(["make", "-n", "--no-print-directory", "release", *arguments], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return result.stdout


def test_the_committed_profile_is_read_and_used():
    plan = planned_release()
    assert "-ir-profile-use=" + os.path.join(ROOT, "bench", "proctord.profdata") in plan
    assert "building without the profile" not in plan


def test_an_unreadable_profile_is_left_out_and_said(tmp_path):
    garbage = tmp_path / "proctord.profdata"
    garbage.write_bytes(b"not a profile\n")
    plan = planned_release(f"PROFILE={garbage}")
    assert "-ir-profile-use" not in plan
    assert f"release: {garbage} is missing or" in plan
    assert "building without the profile" in plan
