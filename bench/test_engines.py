"""Tests of the Cedar and Rego translations in engines.py, on the cases docs/engine.md defines
(the benchmark run itself checks every workload query against Proctor's answers).

Run: bench/.venv/bin/python -m unittest discover -s bench
"""

import unittest

import cedarpy
import regopy

import engines

# (pattern, path, matches) — docs/engine.md, "File export".
PATH_CASES = [
    ("/tmp/**", "/tmp", True),
    ("/tmp/**", "/tmp/a", True),
    ("/tmp/**", "/tmp/a/b", True),
    ("/tmp/**", "/tmpx/a", False),
    ("/a/**/z", "/a/z", True),
    ("/a/**/z", "/a/b/c/z", True),
    ("/a/**/z", "/a/z/y", False),
    ("/home/*/Documents/**", "/home/ann/Documents/x.txt", True),
    ("/home/*/Documents/**", "/home/ann/sub/Documents/x.txt", False),
    ("/a/b*", "/a/bc", True),
    ("/a/b*", "/a/b/c", False),
    ("/a/b**", "/a/bc", True),
    ("/media/**/*.key", "/media/disk.key", True),
    ("/media/**/*.key", "/media/usb/keys/disk.key", True),
    ("/media/**/*.key", "/media/usb/disk.pem", False),
    ("/home/*/Documents/Work/**", "/home/ann/Documents/Work/../../.ssh/id_rsa", False),
    ("/home/*/.ssh/*", "/home/ann/Documents/Work/../../.ssh/id_rsa", True),
    ("/srv/export/*.pdf", "/srv/export//q1.pdf/", True),
]


def export_query(path):
    return {"app": "com.example.a", "action": "file.export", "target": path, "size": None, "appVersion": None}


class RequestPreparation(unittest.TestCase):
    def test_lexical_resolution(self):
        self.assertEqual(engines.lexical_segments("/home/ann/Documents/Work/../../.ssh/id"), ["home", "ann", ".ssh", "id"])
        self.assertEqual(engines.lexical_segments("/a//b/./c/"), ["a", "b", "c"])
        self.assertEqual(engines.lexical_segments("/../.."), [])
        self.assertIsNone(engines.lexical_segments("relative/path.txt"))
        self.assertIsNone(engines.lexical_segments(""))
        self.assertIsNone(engines.lexical_segments("/" + "a" * 4096))

    def test_version_order(self):
        self.assertGreater(engines.version_key("2.10.0"), engines.version_key("2.9.9"))
        self.assertGreater(engines.version_key("3.0.0"), engines.version_key("2.999.999"))
        with self.assertRaises(ValueError):
            engines.version_key("2.0.0-beta")


class PathGlobs(unittest.TestCase):
    def test_cedar(self):
        for pattern, path, expected in PATH_CASES:
            with self.subTest(pattern=pattern, path=path):
                policy = f"permit(principal, action, resource) when {{ {engines.cedar_path_condition(pattern)} }};"
                result = cedarpy.is_authorized(engines.cedar_request(export_query(path)), policy, [])
                self.assertFalse(result.diagnostics.errors)
                self.assertEqual(result.decision == cedarpy.Decision.Allow, expected)

    def test_rego(self):
        for pattern, path, expected in PATH_CASES:
            with self.subTest(pattern=pattern, path=path):
                # The pattern goes in as data, as in the benchmark: regopy 1.5's set_input
                # mangles backslashes in strings (the reply is not JSON), add_data does not.
                interpreter = regopy.Interpreter()
                interpreter.add_data({"pattern": engines.path_glob_regex(pattern)})
                interpreter.add_module("t", "package t\n\ndefault hit := false\n\nhit if regex.match(data.pattern, input.path)\n")
                interpreter.set_input({"path": engines.rego_input(export_query(path))["path"]})
                output = interpreter.query("hit := data.t.hit")
                self.assertEqual(output.binding("hit").json() == "true", expected)

    def test_more_than_one_double_star_is_refused(self):
        with self.assertRaises(ValueError):
            engines.cedar_path_condition("/a/**/b/**")


def app(state="authorized", level="managed", char_limit=0, send="managed", receive="managed", exempt=(),
        print_="allow", capture="allow", allow=None, deny=(), min_version=None, on_violation="block",
        notifications="allow"):
    """An app's entry as `proctor-bench workload` writes it: state and resolved rules."""
    export = {"deny": list(deny)}
    if allow is not None:
        export["allow"] = list(allow)
    compliance = {"onViolation": on_violation, "offlineGraceSeconds": 86400}
    if min_version:
        compliance["minVersion"] = min_version
    return {"state": state, "rules": {"compliance": compliance, "dlp": {
        "clipboard": {"level": level, "charLimit": char_limit},
        "share": {"send": send, "receive": receive, "exempt": list(exempt)},
        "print": print_, "screenCapture": capture, "fileExport": export, "notifications": notifications}}}


APPS = {
    "com.example.blocked-clipboard": app(level="blocked", char_limit=20),
    "com.example.no-limit": app(level="blocked"),
    "com.example.paste-in": app(level="managed-paste-in"),
    "com.example.sharer": app(send="managed", receive="none", exempt=["com.partner.*", "org.viewer"]),
    "com.example.old": app(min_version="2.10.0", on_violation="block"),
    "com.example.old-warn": app(min_version="2.10.0", on_violation="warn"),
    "com.example.exporter": app(allow=["/home/*/Work/**"], deny=["/home/*/Work/Secret/**"]),
    "com.example.no-export": app(allow=[]),
    "com.example.free-export": app(deny=["/tmp/**"]),
    "com.example.quiet": app(notifications="block-org-data"),
    "com.example.silent": app(notifications="block"),
    "com.example.blocked": app(state="blocked"),
    "com.example.retired": app(state="retired", level="any"),
}

# (app, action, target, size, version, allowed) — the semantics of docs/engine.md; every
# expectation was also confirmed against proctord's Admin.Decide on the same apps.
RULE_CASES = [
    ("com.example.blocked-clipboard", "clipboard.copy", "org.other", 20, None, True),   # charLimit, equal
    ("com.example.blocked-clipboard", "clipboard.copy", "org.other", 21, None, False),  # one over
    ("com.example.blocked-clipboard", "clipboard.copy", "org.other", 0, None, True),
    ("com.example.blocked-clipboard", "clipboard.copy", "org.other", None, None, False),  # unknown size
    ("com.example.no-limit", "clipboard.copy", "org.other", 0, None, False),             # charLimit 0
    ("com.example.blocked-clipboard", "clipboard.copy", "com.example.blocked-clipboard", 99, None, True),  # same app
    ("com.example.blocked", "clipboard.copy", "com.example.blocked", 1, None, False),    # state first
    ("com.example.retired", "print", None, None, None, False),
    ("org.unknown", "print", None, None, None, False),
    ("org.unknown", "clipboard.copy", "org.unknown", 1, None, False),
    ("com.example.paste-in", "clipboard.paste", "org.other", None, None, True),
    ("com.example.paste-in", "clipboard.copy", "org.other", 1, None, False),
    ("com.example.paste-in", "clipboard.copy", "com.example.sharer", 1, None, True),    # managed target
    ("com.example.paste-in", "clipboard.copy", "com.example.blocked", 1, None, False),  # blocked is unmanaged
    ("com.example.sharer", "share.send", "com.partner.mail", None, None, True),          # exempt glob
    ("com.example.sharer", "share.send", "org.viewer", None, None, True),                # exempt literal
    ("com.example.sharer", "share.send", "org.viewer2", None, None, False),
    ("com.example.sharer", "share.receive", "com.partner.mail", None, None, False),      # none stays none
    ("com.example.old", "launch", None, None, "2.10.0", True),
    ("com.example.old", "launch", None, None, "2.9.9", False),
    ("com.example.old", "launch", None, None, None, False),
    ("com.example.old-warn", "launch", None, None, "2.9.9", True),
    ("com.example.exporter", "file.export", "/home/ann/Work/a.txt", None, None, True),
    ("com.example.exporter", "file.export", "/home/ann/Work/Secret/a.txt", None, None, False),  # deny wins
    ("com.example.exporter", "file.export", "/home/ann/Other/a.txt", None, None, False),  # not in allow
    ("com.example.exporter", "file.export", "/home/ann/Work/../../ann/Work/x", None, None, True),
    ("com.example.exporter", "file.export", "Work/a.txt", None, None, False),              # relative
    ("com.example.no-export", "file.export", "/home/ann/a.txt", None, None, False),        # allow: []
    ("com.example.free-export", "file.export", "/home/ann/a.txt", None, None, True),       # no allow list
    ("com.example.free-export", "file.export", "/tmp", None, None, False),
    ("com.example.paste-in", "notification", "org", None, None, True),                   # notifications allow
    ("com.example.paste-in", "notification", "plain", None, None, True),
    ("com.example.paste-in", "notification", None, None, None, False),                   # no target
    ("com.example.paste-in", "notification", "banner", None, None, False),               # neither org nor plain
    ("com.example.quiet", "notification", "org", None, None, False),                     # block-org-data
    ("com.example.quiet", "notification", "plain", None, None, True),
    ("com.example.silent", "notification", "plain", None, None, False),                  # block
    ("com.example.blocked", "notification", "plain", None, None, False),                 # state first
]


class RuleSemantics(unittest.TestCase):
    """Each engine's translation of whole apps, on the edges a random workload rarely hits."""

    workload = {"apps": APPS, "queries": [
        {"app": a, "action": act, "target": t, "size": size, "appVersion": v, "allowed": allowed}
        for a, act, t, size, v, allowed in RULE_CASES]}

    def assert_engine(self, engine):
        for case, answer in zip(RULE_CASES, engine.answers()):
            with self.subTest(case=case):
                self.assertEqual(answer, case[-1])

    def test_cedar(self):
        self.assert_engine(engines.CedarEngine(self.workload))

    def test_rego(self):
        self.assert_engine(engines.RegoEngine(self.workload))


class AppGlobs(unittest.TestCase):
    def test_star_spans_dots(self):
        regex = engines.app_glob_regex("com.example.*")
        import re
        self.assertTrue(re.match(regex, "com.example.notes"))
        self.assertTrue(re.match(regex, "com.example.a.b"))
        self.assertFalse(re.match(regex, "com.example"))
        self.assertFalse(re.match(regex, "comXexample.notes"))


if __name__ == "__main__":
    unittest.main()
