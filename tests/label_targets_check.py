"""Every build output a test names (its executable, a -DATTNC=... tool, a kernel library) is built
by tests_<label> for each of its labels, so `make test LABEL=<label>` never leaves one of that
label's tests "Not Run" for want of something unbuilt. Usage: label_targets_check.py BUILD_DIR NINJA
CTEST (a Ninja tree)."""
import json
import os
import re
import subprocess
import sys


def outputs(build, ninja):
    """Every file the build makes, as absolute paths."""
    listing = subprocess.run([ninja, "-C", build, "-t", "targets", "all"], capture_output=True, text=True,
                             check=True).stdout
    return {os.path.normpath(os.path.join(build, line.rsplit(": ", 1)[0])) for line in listing.splitlines()}


def built_by(build, ninja, target):
    """The files building `target` makes or reads, transitively; None when there is no such target."""
    done = subprocess.run([ninja, "-C", build, "-t", "inputs", target], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return {os.path.normpath(os.path.join(build, line)) for line in done.stdout.splitlines()}


def quoted(text):
    """The "..." words of a line of a generated CTestTestfile.cmake."""
    return [re.sub(r"\\(.)", r"\1", w) for w in re.findall(r'"((?:[^"\\]|\\.)*)"', text)]


def commands(folder):
    """{test: its command words} from the CTestTestfile.cmake files of this tree (subdirs followed),
    which name a test's executable even before it is built (ctest --show-only omits it then)."""
    found = {}
    path = os.path.join(folder, "CTestTestfile.cmake")
    if not os.path.exists(path):
        return found
    for line in open(path, encoding="utf-8"):
        if line.startswith("add_test("):
            words = quoted(line)
            found[words[0]] = words[1:]
        elif line.startswith("subdirs("):
            for sub in quoted(line):
                found.update(commands(os.path.join(folder, sub)))
    return found


def named_paths(command):
    """The paths among a test's command words, '-DNAME=path' included."""
    for word in command:
        yield os.path.normpath(word)
        if word.startswith("-D") and "=" in word:
            yield os.path.normpath(word.split("=", 1)[1])


def main():
    build, ninja, ctest = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    listing = subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True,
                             check=True).stdout
    made = outputs(build, ninja)
    command_of = commands(build)
    by_label, problems, checked = {}, [], 0
    for test in json.loads(listing)["tests"]:
        labels = next((p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"), [])
        needed = [p for p in named_paths(command_of.get(test["name"], [])) if p in made]
        for label in labels:
            if label not in by_label:
                by_label[label] = built_by(build, ninja, f"tests_{label}")
            for path in needed:
                checked += 1
                if by_label[label] is None:
                    problems.append(f"label '{label}': there is no target tests_{label}")
                elif path not in by_label[label]:
                    problems.append(f"label '{label}': test '{test['name']}' names {os.path.relpath(path, build)}, "
                                    f"which tests_{label} does not build: add attnc_test_needs({test['name']} "
                                    "<the target that makes it>)")
    for line in sorted(set(problems)):
        print(line)
    print(f"{checked} (label, build output) pairs checked over {len(by_label)} labels, {len(set(problems))} problems")
    sys.exit(1 if problems or checked == 0 else 0)


main()
