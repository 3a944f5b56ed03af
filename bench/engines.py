"""Proctor's benchmark workload in Cedar (cedarpy) and Rego (regopy).

Reads the workload that `proctor-bench workload` writes (every app's state and resolved
rules, the queries, Proctor's answer to each), expresses the same rules as a Cedar policy
set (one permit or forbid per rule) and as a Rego module over a data document, checks that
both engines answer every query as Proctor did, and times them.

What the request side does before either engine sees a query (as any caller of Cedar or
Rego would have to, since neither has Proctor's notions built in): the export path is
resolved lexically ('.', '..', repeated and trailing slashes) and split into segments, and
the app version becomes one comparable integer. This preparation is done once, outside the
timed region; Proctor's own figure includes its path resolution.
"""

import json
import re
import time

import cedarpy
import regopy

MAX_EXPORT_PATH_BYTES = 4096
DATA_ACTIONS = ["clipboard.copy", "clipboard.paste", "share.send", "share.receive"]


class Mismatch(Exception):
    """An engine answered a query differently from Proctor: the comparison would be dishonest."""


# --- request preparation -------------------------------------------------------------------

def lexical_segments(path):
    """The segments of an absolute path after lexical resolution, or None if not absolute."""
    if not path or not path.startswith("/") or len(path.encode()) > MAX_EXPORT_PATH_BYTES:
        return None
    segments = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if segments:
                segments.pop()
            continue
        segments.append(part)
    return segments


def version_key(text):
    """A semantic version without pre-release or build as one integer (ordering preserved)."""
    if text is None:
        return None
    if "-" in text or "+" in text:
        raise ValueError(f"version {text!r}: pre-release/build ordering is not encoded for Cedar and Rego")
    major, minor, patch = (int(x) for x in text.split("."))
    return (major * 1_000_000 + minor) * 1_000_000 + patch


# --- Cedar ---------------------------------------------------------------------------------

def cedar_string(text):
    return json.dumps(text)


def cedar_like(pattern):
    """A Cedar `like` pattern: `*` is the wildcard; a literal backslash is escaped."""
    return '"' + json.dumps(pattern)[1:-1] + '"'


def cedar_segment_test(accessor, segment):
    if "*" in segment:
        return f"{accessor} like {cedar_like(segment)}"
    return f"{accessor} == {cedar_string(segment)}"


def cedar_path_condition(pattern):
    """A Cedar condition true when the prepared path in `context` matches the path glob:
    a segment `**` spans zero or more folders, `*` stays within a segment."""
    segments = lexical_segments(pattern)
    if segments is None:
        raise ValueError(f"path pattern {pattern!r} is not absolute")
    spans = [i for i, s in enumerate(segments) if s == "**"]
    tests = ["context.absolute"]
    if not spans:
        tests.append(f"context.depth == {len(segments)}")
        tests += [cedar_segment_test(f"context.s{i}", s) for i, s in enumerate(segments)]
    elif len(spans) == 1:
        prefix, suffix = segments[:spans[0]], segments[spans[0] + 1:]
        tests.append(f"context.depth >= {len(prefix) + len(suffix)}")
        tests += [cedar_segment_test(f"context.s{i}", s) for i, s in enumerate(prefix)]
        tests += [cedar_segment_test(f"context.r{i}", s) for i, s in enumerate(reversed(suffix))]
    else:
        raise ValueError(f"path pattern {pattern!r}: more than one '**' is not encoded for Cedar")
    return " && ".join(tests)


def cedar_policies(apps):
    """One permit or forbid per rule of every app (built-ins and defaults already resolved)."""
    out = [
        # Data moves freely within one app (the state forbids below still win).
        'permit(principal, action in [' + ", ".join(f'Action::"{a}"' for a in DATA_ACTIONS)
        + '], resource) when { principal has managed && principal == resource };'
    ]
    for app_id, app in sorted(apps.items()):
        p = f'principal == App::{cedar_string(app_id)}'
        if app["state"] != "authorized":
            out.append(f"forbid({p}, action, resource);")
            continue
        dlp, compliance = app["rules"]["dlp"], app["rules"]["compliance"]

        def permit(action, condition=None):
            when = f" when {{ {condition} }}" if condition else ""
            out.append(f'permit({p}, action == Action::"{action}", resource){when};')

        if "minVersion" not in compliance or compliance["onViolation"] == "warn":
            permit("launch")
        else:
            permit("launch", f'context has version && context.version >= {version_key(compliance["minVersion"])}')

        managed_target = "resource has managed && resource.managed"
        level = dlp["clipboard"]["level"]
        if level == "any":
            permit("clipboard.copy")
        elif level in ("managed", "managed-paste-in"):
            permit("clipboard.copy", managed_target)
        limit = dlp["clipboard"]["charLimit"]
        if limit > 0:
            permit("clipboard.copy", f"context has size && context.size >= 0 && context.size <= {limit}")
        if level in ("any", "managed-paste-in"):
            permit("clipboard.paste")
        elif level == "managed":
            permit("clipboard.paste", managed_target)

        for action, key in (("share.send", "send"), ("share.receive", "receive")):
            share = dlp["share"][key]
            if share == "any":
                permit(action)
            elif share == "managed":
                permit(action, managed_target)
                for entry in dlp["share"]["exempt"]:
                    test = (f"context.target like {cedar_like(entry)}" if "*" in entry
                            else f"context.target == {cedar_string(entry)}")
                    permit(action, f"context has target && {test}")

        if dlp["print"] == "allow":
            permit("print")
        if dlp["screenCapture"] == "allow":
            permit("screen-capture")
        if dlp["notifications"] == "allow":
            permit("notification", 'context has target && ["org", "plain"].contains(context.target)')
        elif dlp["notifications"] == "block-org-data":
            permit("notification", 'context has target && context.target == "plain"')

        export = dlp["fileExport"]
        for pattern in export.get("deny", []):
            out.append(f'forbid({p}, action == Action::"file.export", resource) when {{ {cedar_path_condition(pattern)} }};')
        if "allow" not in export:
            permit("file.export", "context.absolute")
        for pattern in export.get("allow", []):
            permit("file.export", cedar_path_condition(pattern))
    return "\n".join(out)


def cedar_entities(apps):
    return [{"uid": {"type": "App", "id": app_id}, "attrs": {"managed": app["state"] == "authorized"}, "parents": []}
            for app_id, app in apps.items()]


def cedar_request(query):
    context = {}
    if query["size"] is not None:
        context["size"] = query["size"]
    if query["appVersion"] is not None:
        context["version"] = version_key(query["appVersion"])
    target = query["target"]
    if query["action"] == "file.export":
        segments = lexical_segments(target)
        context["absolute"] = segments is not None
        if segments is not None:
            context["depth"] = len(segments)
            for i, segment in enumerate(segments):
                context[f"s{i}"] = segment
            for i, segment in enumerate(reversed(segments)):
                context[f"r{i}"] = segment
        resource = {"type": "App", "id": ""}
    else:
        if target is not None:
            context["target"] = target
        resource = {"type": "App", "id": target if target is not None else ""}
    return {"principal": {"type": "App", "id": query["app"]}, "action": {"type": "Action", "id": query["action"]},
            "resource": resource, "context": context}


class CedarEngine:
    name = "cedar"

    def __init__(self, workload, policies=None):
        """`policies` replaces the generated policy set (to measure the binding alone)."""
        self.source = policies if policies is not None else cedar_policies(workload["apps"])
        self.policies = cedarpy.PolicySet.from_str(self.source)
        self.entities = cedarpy.Entities.from_json_str(json.dumps(cedar_entities(workload["apps"])))
        self.requests = [cedar_request(q) for q in workload["queries"]]

    def answers(self):
        results = cedarpy.is_authorized_batch(self.requests, self.policies, self.entities)
        for result in results:
            if result.diagnostics.errors:
                raise Mismatch(f"cedar evaluation error: {result.diagnostics.errors}")
        return [result.decision == cedarpy.Decision.Allow for result in results]

    def run_batch(self):
        cedarpy.is_authorized_batch(self.requests, self.policies, self.entities)


# --- Rego ----------------------------------------------------------------------------------

REGO_MODULE = r'''
package proctor

default allow := false

app := data.apps[input.app]

authorized if app.state == "authorized"

target_managed if data.apps[input.target].state == "authorized"

same_app if input.target == input.app

data_action if input.action in {"clipboard.copy", "clipboard.paste", "share.send", "share.receive"}

allow if {
	authorized
	data_action
	same_app
}

allow if {
	authorized
	input.action == "launch"
	not app.minVersion
}

allow if {
	authorized
	input.action == "launch"
	app.onViolation == "warn"
}

allow if {
	authorized
	input.action == "launch"
	input.version >= app.minVersion
}

allow if {
	authorized
	input.action == "clipboard.copy"
	app.clipboard.level == "any"
}

allow if {
	authorized
	input.action == "clipboard.copy"
	app.clipboard.level in {"managed", "managed-paste-in"}
	target_managed
}

allow if {
	authorized
	input.action == "clipboard.copy"
	app.clipboard.charLimit > 0
	input.size >= 0
	input.size <= app.clipboard.charLimit
}

allow if {
	authorized
	input.action == "clipboard.paste"
	app.clipboard.level in {"any", "managed-paste-in"}
}

allow if {
	authorized
	input.action == "clipboard.paste"
	app.clipboard.level == "managed"
	target_managed
}

share_level := app.share.send if input.action == "share.send"

share_level := app.share.receive if input.action == "share.receive"

allow if {
	authorized
	share_level == "any"
}

allow if {
	authorized
	share_level == "managed"
	target_managed
}

allow if {
	authorized
	share_level == "managed"
	some pattern in app.share.exemptRegexes
	regex.match(pattern, input.target)
}

allow if {
	authorized
	input.action == "print"
	app.print == "allow"
}

allow if {
	authorized
	input.action == "screen-capture"
	app.screenCapture == "allow"
}

allow if {
	authorized
	input.action == "notification"
	app.notifications == "allow"
	input.target in {"org", "plain"}
}

allow if {
	authorized
	input.action == "notification"
	app.notifications == "block-org-data"
	input.target == "plain"
}

export_denied if {
	some pattern in app.fileExport.denyRegexes
	regex.match(pattern, input.path)
}

export_allowed if not app.fileExport.hasAllow

export_allowed if {
	some pattern in app.fileExport.allowRegexes
	regex.match(pattern, input.path)
}

allow if {
	authorized
	input.action == "file.export"
	input.absolute
	not export_denied
	export_allowed
}
'''


def app_glob_regex(pattern):
    return "^" + ".*".join(re.escape(part) for part in pattern.split("*")) + "$"


def path_glob_regex(pattern):
    """A regular expression over the prepared path ('/a/b', '' for the root) for a path glob."""
    segments = lexical_segments(pattern)
    if segments is None:
        raise ValueError(f"path pattern {pattern!r} is not absolute")
    out = []
    for segment in segments:
        if segment == "**":
            out.append("(/[^/]+)*")
        else:
            out.append("/" + "[^/]*".join(re.escape(part) for part in segment.split("*")))
    return "^" + "".join(out) + "$"


def rego_data(apps):
    result = {}
    for app_id, app in apps.items():
        dlp, compliance = app["rules"]["dlp"], app["rules"]["compliance"]
        entry = {
            "state": app["state"],
            "onViolation": compliance["onViolation"],
            "clipboard": dlp["clipboard"],
            "share": {"send": dlp["share"]["send"], "receive": dlp["share"]["receive"],
                      "exemptRegexes": [app_glob_regex(p) for p in dlp["share"]["exempt"]]},
            "print": dlp["print"],
            "screenCapture": dlp["screenCapture"],
            "notifications": dlp["notifications"],
            "fileExport": {"hasAllow": "allow" in dlp["fileExport"],
                           "allowRegexes": [path_glob_regex(p) for p in dlp["fileExport"].get("allow", [])],
                           "denyRegexes": [path_glob_regex(p) for p in dlp["fileExport"].get("deny", [])]},
        }
        if "minVersion" in compliance:
            entry["minVersion"] = version_key(compliance["minVersion"])
        result[app_id] = entry
    return {"apps": result}


def rego_input(query):
    value = {"app": query["app"], "action": query["action"]}
    if query["size"] is not None:
        value["size"] = query["size"]
    if query["appVersion"] is not None:
        value["version"] = version_key(query["appVersion"])
    if query["action"] == "file.export":
        segments = lexical_segments(query["target"])
        value["absolute"] = segments is not None
        value["path"] = "".join("/" + s for s in segments) if segments is not None else ""
    elif query["target"] is not None:
        value["target"] = query["target"]
    return value


class RegoEngine:
    name = "rego"

    def __init__(self, workload):
        self.interpreter = regopy.Interpreter()
        self.interpreter.add_data(rego_data(workload["apps"]))
        self.interpreter.add_module("proctor", REGO_MODULE)
        # A bare reference as the query reads back as undefined in regopy 1.5; a binding works.
        self.bundle = self.interpreter.build("allowed := data.proctor.allow")
        self.inputs = [regopy.Input(rego_input(q)) for q in workload["queries"]]

    def evaluate(self, value):
        self.interpreter.set_input(value)
        output = self.interpreter.query_bundle(self.bundle)
        if not output.ok():
            raise Mismatch(f"rego evaluation error: {output}")
        return output

    def answers(self):
        result = []
        for value in self.inputs:
            output = self.evaluate(value)  # the binding's node lives only as long as its output
            result.append(output.binding("allowed").json() == "true")
        return result

    def run_batch(self):
        for value in self.inputs:
            self.evaluate(value)


# --- the comparison ------------------------------------------------------------------------

def check(engine, workload):
    """Raises Mismatch unless the engine answers every query as Proctor did."""
    answers = engine.answers()
    wrong = [(q, a) for q, a in zip(workload["queries"], answers) if q["allowed"] != a]
    if wrong:
        lines = [f"{engine.name} answers {len(wrong)} of {len(answers)} queries differently from Proctor, e.g.:"]
        for query, answer in wrong[:5]:
            lines.append(f"  {json.dumps(query)} -> {engine.name} says allowed={answer}")
        raise Mismatch("\n".join(lines))
    return len(answers)


def measure(engine, query_count, batches):
    """Nanoseconds per decision of each batch (one batch = every query once)."""
    engine.run_batch()
    samples = []
    for _ in range(batches):
        began = time.perf_counter_ns()
        engine.run_batch()
        samples.append((time.perf_counter_ns() - began) / query_count)
    return samples
