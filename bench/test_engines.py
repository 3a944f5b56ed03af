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
