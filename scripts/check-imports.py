#!/usr/bin/env python3
"""Checks that each target's imports match its dependencies in Package.swift.

The layer rules in Package.swift's header hold only if no target imports a module of this
package that it does not declare (SwiftPM lets such an import build whenever the module
happens to be built first) and no target declares a dependency it never imports (which
hides the real layering). Reads the manifest through `swift package dump-package`, then
every `import X` in the target's Swift files; prints one line per mismatch, naming the
file and the module, and exits 1 if there is any.

Usage: scripts/check-imports.py [PACKAGE_DIR]   (or DUMP_JSON=file to skip dump-package)
"""
import json
import os
import re
import subprocess
import sys

IMPORT = re.compile(
    r"^[ \t]*(?:@\w+(?:\([^)\n]*\))?[ \t]+)*(?:(?:public|package|internal|fileprivate|private)\s+)?"
    r"import[ \t]+(?:(?:typealias|struct|class|enum|protocol|let|var|func)[ \t]+)?(\w+)",
    re.MULTILINE)
# A dependency that is needed without an import: a plugin runs at build time, an executable
# product is run by the tests.
NOT_IMPORTED_KINDS = {"plugin", "executable"}


def load_manifest(package_dir):
    if "DUMP_JSON" in os.environ:
        with open(os.environ["DUMP_JSON"]) as handle:
            return json.load(handle)
    output = subprocess.run(["swift", "package", "--package-path", package_dir, "dump-package"],
                            check=True, capture_output=True, text=True).stdout
    return json.loads(output)


def dependency_names(target):
    names = []
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                names.append(dependency[kind][0])
    return names


def target_directory(package_dir, target):
    if target.get("path"):
        return os.path.join(package_dir, target["path"])
    base = "Tests" if target["type"] == "test" else ("Plugins" if target["type"] == "plugin" else "Sources")
    return os.path.join(package_dir, base, target["name"])


def swift_files(directory, excluded):
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if os.path.join(root, d) not in excluded)
        for name in sorted(files):
            if name.endswith(".swift"):
                yield os.path.join(root, name)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


def main():
    package_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    manifest = load_manifest(package_dir)
    targets = {target["name"]: target for target in manifest["targets"]}
    problems = []
    for target in manifest["targets"]:
        if target["type"] in ("system", "binary"):
            continue
        directory = target_directory(package_dir, target)
        excluded = {os.path.join(directory, path) for path in target.get("exclude", [])}
        declared = set(dependency_names(target))
        imported = set()
        for path in swift_files(directory, excluded):
            with open(path, encoding="utf-8") as handle:
                text = strip_comments(handle.read())
            for module in IMPORT.findall(text):
                imported.add(module)
                if module in targets and module != target["name"] and module not in declared:
                    problems.append(f"{os.path.relpath(path, package_dir)}: imports {module}, "
                                    f"which target {target['name']} does not declare in Package.swift")
        for name in sorted(declared - imported):
            if targets.get(name, {}).get("type") in NOT_IMPORTED_KINDS:
                continue
            problems.append(f"Package.swift: target {target['name']} declares {name} "
                            f"but no file in {os.path.relpath(directory, package_dir)} imports it")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-imports: {len(problems)} mismatch(es) between imports and Package.swift", file=sys.stderr)
        return 1
    print(f"check-imports: imports match Package.swift for {len(targets)} targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
