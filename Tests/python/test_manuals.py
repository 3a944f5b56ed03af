"""The manual pages as make man builds them from the real binaries, rendered by man-db."""
import os
import re
import subprocess

import pytest

from conftest import BIN, REPO

PAGES = ["proctorctl.1", "proctor-policy.5", "proctord.8", "proctord.conf.5"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("man")
    subprocess.run([os.path.join(REPO, "scripts", "build-man.sh"), BIN, str(out)], check=True)
    return out


def render(path, width="80"):
    """What man shows, and its warnings. --nh --nj: no hyphenation or justification, so
    an option is never split across lines when searched for."""
    env = dict(os.environ, MANWIDTH=width, MAN_KEEP_FORMATTING="")
    result = subprocess.run(["man", "--warnings", "--nh", "--nj", "-l", str(path)], env=env,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_without_warnings(pages, page):
    text, warnings = render(pages / page)
    assert warnings == ""
    name, section = page.rsplit(".", 1)
    assert text.splitlines()[0].startswith(f"{name}({section})")
    for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO"]:
        assert heading in text.splitlines(), f"{page} lacks {heading}"


def proctorctl(*args):
    result = subprocess.run([os.path.join(BIN, "proctorctl"), *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout


def listed_commands():
    """The commands proctorctl --help lists, as word lists."""
    overview = proctorctl("--help").split("\n\n")
    block = next(part for part in overview if part.startswith("Commands:"))
    commands = []
    for line in block.splitlines()[1:]:
        # "  policy apply FILE    validate a policy …": the name column ends at two spaces.
        words = [word for word in re.split(r" {2,}", line.strip())[0].split() if re.fullmatch(r"[a-z]+", word)]
        if words != ["help"]:
            commands.append(words)
    return commands


def options_of(manual):
    """The option names a command's manual (--help) lists in its OPTIONS section."""
    section = manual.split("\nOPTIONS\n")[1].split("\nEXIT STATUS\n")[0]
    return re.findall(r"^    (--[a-z-]+)", section, re.MULTILINE)


def test_proctorctl_page_has_every_command_and_option(pages):
    text, _ = render(pages / "proctorctl.1", width="200")
    commands = listed_commands()
    assert len(commands) >= 14
    for words in commands:
        # Each command is a subsection with its synopsis: "proctorctl policy apply [--expect-version V] …"
        synopsis = next((line.strip() for line in text.splitlines()
                         if line.strip().startswith("proctorctl " + " ".join(words) + " ")
                         or line.strip() == "proctorctl " + " ".join(words)), None)
        assert synopsis, f"proctorctl(1) lacks the command {' '.join(words)}"
        for option in options_of(proctorctl(*words, "--help")):
            if option == "--help":
                continue
            assert f"[{option}" in synopsis, f"{' '.join(words)}: {option} missing from its synopsis"
            assert re.search(rf"^ +{option}( [A-Z]+)?$", text, re.MULTILINE), f"{option} is not described"
    for option in ["--address PATH", "--json", "--version", "--help"]:
        assert re.search(rf"^ +{option}$", text, re.MULTILINE), f"global option {option} missing"


def test_proctord_page_has_every_option_of_its_help(pages):
    text, _ = render(pages / "proctord.8", width="200")
    usage = subprocess.run([os.path.join(BIN, "proctord"), "--help"], capture_output=True, text=True).stdout
    options = re.findall(r"^  (-[-a-z]+(?: [A-Z]+)?)", usage, re.MULTILINE)
    assert len(options) >= 12
    for option in options:
        assert option in text, f"proctord(8) lacks {option}"


def test_policy_page_names_every_action_and_setting(pages):
    text, _ = render(pages / "proctor-policy.5", width="200")
    actions = re.search(r"ACTION is one of ([^.]+)\.", proctorctl("help", "check").replace("\n       ", " "))
    for action in re.split(r",\s*", actions.group(1)):
        assert action.strip() in text, f"proctor-policy(5) lacks the action {action}"
    for key in ["clipboard", "share", "print", "screenCapture", "fileExport", "notifications",
                "minVersion", "onViolation", "offlineGraceSeconds", "state", "match", "config"]:
        assert re.search(rf"^ +([a-zA-Z]+, )*{key}\b", text, re.MULTILINE), f"proctor-policy(5) does not describe {key}"


def test_configuration_page_describes_every_key_the_parser_takes(pages):
    """The keys come from the parser's own table (FleetConfiguration.swift), so a new key
    without a line in proctord.conf(5) fails here."""
    text, _ = render(pages / "proctord.conf.5", width="200")
    with open(os.path.join(REPO, "Sources", "ProctorFleet", "FleetConfiguration.swift")) as source:
        table = re.search(r'"Source": \[([^\]]+)\],\s*"Policy": \[([^\]]+)\]', source.read())
    keys = re.findall(r'"(\w+)"', table.group(1) + table.group(2))
    assert len(keys) >= 8
    for key in keys:
        assert re.search(rf"^ +({key}=|\S+=, {key}=)", text, re.MULTILINE), f"proctord.conf(5) does not describe {key}="
    for section in ["[Source] SECTION", "[Policy] SECTION"]:
        assert section in text
