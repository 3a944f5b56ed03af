"""proctorctl's shell completions, driven in real bash, zsh and fish against the real
proctorctl and, for app ids, a real proctord."""
import os
import shutil
import subprocess
import time

import pytest

from conftest import BIN, REPO

COMPLETIONS = os.path.join(REPO, "completions")
APP_IDS = ["io.proctor.test.blocked", "io.proctor.test.mail", "io.proctor.test.notes", "io.proctor.test.other-exe"]


def shell_env(**extra):
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    env.update(extra)
    return env


def bash_complete(*words, bash_completion=False, **env):
    """COMPREPLY of _proctorctl in a scripted bash for the line `proctorctl WORDS…`, the
    last word being completed (with bash-completion's helpers loaded or not)."""
    script = ""
    if bash_completion:
        script += ". /usr/share/bash-completion/bash_completion\n"
    script += f". {COMPLETIONS}/proctorctl.bash\n"
    script += 'COMP_WORDS=(proctorctl "$@"); COMP_CWORD=$#; COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}\n'
    script += '_proctorctl; printf "%s\\n" "${COMPREPLY[@]}"\n'
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", *words],
                            env=shell_env(**env), capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and result.stderr == "", result
    return sorted(line for line in result.stdout.splitlines() if line)


@pytest.mark.parametrize("bash_completion", [False, True])
def test_bash_completes_commands_options_and_actions(bash_completion):
    assert bash_complete("st", bash_completion=bash_completion) == ["status"]
    assert bash_complete("policy", "va", bash_completion=bash_completion) == ["validate"]
    assert bash_complete("--js", bash_completion=bash_completion) == ["--json"]
    assert bash_complete("policy", "apply", "--exp", bash_completion=bash_completion) == ["--expect-version"]
    assert bash_complete("check", "some.app", "clip", bash_completion=bash_completion) == ["clipboard.copy",
                                                                                           "clipboard.paste"]
    assert bash_complete("events", "--kind", "re", bash_completion=bash_completion) == ["registration"]


def test_bash_completes_files_where_a_path_goes(workdir):
    for name in ["policy-a.json", "policy-b.json"]:
        open(os.path.join(workdir, name), "w").close()
    prefix = os.path.join(workdir, "policy-")
    assert bash_complete("policy", "validate", prefix) == [prefix + "a.json", prefix + "b.json"]
    assert bash_complete("check", "a.b", "file.export", prefix + "a") == [prefix + "a.json"]


def test_bash_with_bash_completion_keeps_option_equals_value_whole():
    assert bash_complete("events", "--kind=dec", bash_completion=True) == ["--kind=decision"]


def test_bash_completes_app_ids_from_the_running_daemon(daemon):
    assert bash_complete("--address", daemon.admin, "app", "io.proctor.test.") == APP_IDS
    assert bash_complete("wipe", "io.proctor.test.m", PROCTOR_ADMIN_SOCKET=daemon.admin) == ["io.proctor.test.mail"]
    assert bash_complete("check", "--address", daemon.admin, "io.proctor.test.notes", "share.send",
                         "io.proctor.test.n") == ["io.proctor.test.notes"]
    daemon.stop()
    started = time.monotonic()
    assert bash_complete("--address", daemon.admin, "app", "io.proctor.test.") == []
    assert time.monotonic() - started < 10, "completion without proctord must not hang"


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (make deps installs it)")
def test_zsh_completion_parses_and_offers_the_same(daemon):
    subprocess.run(["zsh", "-n", os.path.join(COMPLETIONS, "_proctorctl")], check=True)
    # The completion function as compinit would autoload it, with compsys's _describe and
    # _files replaced by printers: what it hands them is what zsh would offer.
    script = f"""
        _describe() {{ print -l -- "${{(@P)4}}"; }}
        _files() {{ print FILES; }}
        fpath=({COMPLETIONS} $fpath); autoload -Uz _proctorctl
        words=(proctorctl "$@"); CURRENT=$(( $# + 1 )); _proctorctl
    """

    def zsh_complete(*words):
        result = subprocess.run(["zsh", "-f", "-c", script, "zsh", *words], env=shell_env(),
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0 and result.stderr == "", result
        return result.stdout.splitlines()

    assert zsh_complete("polic") == ["policy"]
    assert zsh_complete("stat") == ["status:show the policy in force, last reload, MDM pull, counts"]
    assert zsh_complete("check", "a.b", "file.export", "/") == ["FILES"]
    assert zsh_complete("--address", daemon.admin, "app", "io.proctor.test.") == APP_IDS


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (make deps installs it)")
def test_fish_completion_parses_and_offers_the_same(daemon, workdir):
    subprocess.run(["fish", "-n", os.path.join(COMPLETIONS, "proctorctl.fish")], check=True)

    def fish_complete(line):
        result = subprocess.run(["fish", "--no-config", "-c",
                                 f"source {COMPLETIONS}/proctorctl.fish; complete -C $argv[1]", line],
                                env=shell_env(HOME=workdir), capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result
        return sorted(line.split("\t")[0] for line in result.stdout.splitlines())

    assert fish_complete("proctorctl stat") == ["status"]
    assert fish_complete("proctorctl check a.b print --si") == ["--size"]
    assert fish_complete(f"proctorctl --address {daemon.admin} app io.proctor.test.") == APP_IDS
