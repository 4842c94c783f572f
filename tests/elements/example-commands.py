# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every command the examples tell a user to run exists as written.

Reads the command lines of docs/examples/README.md, docs/recipes.md and
the examples' own texts (docs/examples/python/*.py): lines of the
indented blocks, and commands named in running text. A command that runs
a program of the project (a script, an example, a program of the build)
must name a file that exists, and pass only options that program
accepts: what its --help lists (Python scripts, GOption programs), or
what its option parsing names (shell scripts, read, never run). In a
gst-launch-1.0 line, cuipcsink and cuipcsrc must have every property it
sets (gst-inspect-1.0).

    example-commands.py SOURCE_ROOT BUILD_ROOT
"""

import ast
import os
import re
import shlex
import subprocess
import sys

SOURCE, BUILD = sys.argv[1], sys.argv[2]
DOCS = ["docs/examples/README.md", "docs/recipes.md"]
EXAMPLES = "docs/examples/python"

# a program of the project: a script, or a program in the build folder
PROGRAM = re.compile(
    r"(?<![^\s(])(?:python3\s+)?((?:\./)?[\w./-]*[\w-]+\.(?:py|sh)\b|"
    r"(?:\./)?build/[\w./-]+)((?:\s+[^\s`)&|;]+)*)")
OURS = ("cuipcsink", "cuipcsrc", "cudaipcsink", "cudaipcsrc")
# Under the sanitizer pass (tests/sanitize.sh) the plugin and library are
# built with AddressSanitizer: the programs run here, which load them
# (gst-inspect-1.0, a Python example importing cudaipc), need its runtime
# first, and the leaks of the interpreter and GStreamer's tools are theirs;
# the build's own programs link it themselves.
ENV = dict(os.environ)
if os.environ.get("CUDAIPC_TOOL_PRELOAD"):
    ENV.update(LD_PRELOAD=os.environ["CUDAIPC_TOOL_PRELOAD"],
               ASAN_OPTIONS="detect_leaks=0")


def texts():
    """(document, its text lines) for each document that tells commands:
    a Python example's text is its docstring and comments."""
    for doc in DOCS:
        path = os.path.join(SOURCE, doc)
        if os.path.exists(path):
            with open(path) as f:
                yield doc, f.read().splitlines()
    folder = os.path.join(SOURCE, EXAMPLES)
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(folder, name)) as f:
            source = f.read()
        lines = (ast.get_docstring(ast.parse(source)) or "").splitlines()
        lines += [ln.split("#", 1)[1] for ln in source.splitlines()
                  if ln.lstrip().startswith("#") and not ln.startswith("#!")]
        yield os.path.join(EXAMPLES, name), lines


def commands(lines):
    """Lines joined at a trailing backslash, with [optional] brackets and
    the markdown's backquotes gone."""
    out, cur = [], ""
    for line in lines:
        line = line.strip()
        if line.startswith("<!--"):
            continue
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        out.append((cur + line).replace("[", " ").replace("]", " ")
                   .replace("`", " "))
        cur = ""
    return out


def resolve(doc, name):
    """The file a command names, as a user in the document's folder or at
    the top of the tree (after the build's two commands) would find it."""
    rel = name[2:] if name.startswith("./") else name
    if rel.startswith("build/"):
        return os.path.join(BUILD, rel[len("build/"):])
    for base in (os.path.dirname(os.path.join(SOURCE, doc)), SOURCE):
        if os.path.exists(os.path.join(base, rel)):
            return os.path.join(base, rel)
    return None


_accepted = {}


def accepted(path):
    """The long options the program at @path takes."""
    if path in _accepted:
        return _accepted[path]
    if path.endswith(".sh"):
        # its option parsing: the patterns of its case branches
        with open(path) as f:
            text = f.read()
        opts = set(re.findall(r"^\s*\(?((?:--?[\w-]+\|?)+)(?:=\*)?\)",
                              text, re.M))
        opts = {o for group in opts for o in group.split("|") if o}
    else:
        # a program of the build carries its own sanitizer runtime
        py = path.endswith(".py")
        argv = [sys.executable, path] if py else [path]
        run = subprocess.run(argv + ["--help"], capture_output=True,
                             text=True, timeout=60,
                             env=ENV if py else os.environ)
        if run.returncode != 0:
            raise SystemExit("FAIL: %s --help: exit %d: %s" %
                             (path, run.returncode, run.stderr.strip()))
        opts = set(re.findall(r"(?<![\w-])(--?[\w][\w-]*)", run.stdout))
    _accepted[path] = opts
    return opts


_props = {}


def properties(factory):
    if factory not in _props:
        run = subprocess.run(["gst-inspect-1.0", factory], capture_output=True,
                             text=True, timeout=60, env=ENV)
        if run.returncode != 0:
            raise SystemExit("FAIL: gst-inspect-1.0 %s: %s" %
                             (factory, run.stderr.strip()))
        text = run.stdout.split("Element Properties:", 1)[-1]
        _props[factory] = set(re.findall(r"^  ([a-z][\w-]*)\s*:", text,
                                         re.M))
    return _props[factory]


def check_program(doc, line, problems):
    for m in PROGRAM.finditer(line):
        name, args = m.group(1), m.group(2).split()
        if name.startswith("--"):
            continue
        path = resolve(doc, name)
        if path is None or not os.path.exists(path):
            problems.append("%s: %r names %s, which does not exist" %
                            (doc, line, name))
            continue
        opts = [a.split("=", 1)[0] for a in args if a.startswith("-")]
        if not opts:
            continue
        takes = accepted(path)
        for o in opts:
            if o not in takes:
                problems.append("%s: %r passes %s, which %s does not take "
                                "(it takes: %s)" %
                                (doc, line, o, name,
                                 " ".join(sorted(takes)) or "none"))


def check_launch(doc, line, problems):
    launch = line.split("gst-launch-1.0", 1)[1]
    for part in launch.split("!"):
        words = shlex.split(part.split("&")[0].split("|")[0], posix=True)
        words = [w for w in words if not w.startswith("-")]
        if not words or words[0] not in OURS:
            continue
        have = properties(words[0])
        for w in words[1:]:
            prop = w.split("=", 1)[0]
            if "=" in w and prop not in have:
                problems.append("%s: %r sets %s on %s, which has no such "
                                "property" % (doc, line, prop, words[0]))


def main():
    problems, n = [], 0
    for doc, lines in texts():
        for line in commands(lines):
            if "gst-launch-1.0" in line:
                check_launch(doc, line, problems)
                n += 1
            elif PROGRAM.search(line):
                check_program(doc, line, problems)
                n += 1
    for p in problems:
        print("FAIL: " + p)
    print("%d command lines read, %d problems" % (n, len(problems)))
    return 1 if problems or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
