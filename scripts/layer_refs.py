#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The references between the library's files (sim/ and include/): every #include that resolves
# to a file of the tree, and every use of a function that another file defines (a call, or its
# name taken as a pointer). Prints the circles (sets of two or more files that reach each other)
# and the references that go up the order of sim/'s folders, the order check_layers.sh enforces
# for includes (SIM_ORDER there, written once). scripts/check_layers.sh runs it after its own
# check: a circle, or more than MAX_UP references up, fails. No build: the text alone, comments
# and strings dropped; a name defined in several files (the CPU and CUDA twins of a stub) counts
# towards none.
#
# Usage: scripts/layer_refs.py [ROOT] [--list] [--max-up N]
#            ROOT: default this repository; --list: every reference up, not only the counts
#        scripts/layer_refs.py --self-test   plant a circle and a reference up in a scratch tree
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_UP = 4
# Circles left on purpose, each with the reason: one that holds the first file, all of its files
# under the folder; any other circle fails.
KNOWN_CIRCLES = [
    # The trajectory formats call back the registry that picks them (traj_bodies_alloc in
    # trajectory.c): moving that helper below them breaks it (issue 38: sim/io/ changed hands).
    ("sim/io/trajectory.c", "sim/io/"),
]


def known(comp):
    return any(anchor in comp and all(f.startswith(folder) for f in comp)
               for anchor, folder in KNOWN_CIRCLES)


SOURCES = (".c", ".h", ".cu", ".cuh", ".cc", ".cpp")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "do", "else",
            "case", "__launch_bounds__", "alignof", "_Alignof", "static_assert",
            "_Static_assert"}


def sim_order():
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "check_layers.sh")).read()
    m = re.search(r'^SIM_ORDER="([^"]*)"', text, re.M)
    return m.group(1).split()


def strip(text):
    """Comments, strings and character constants blanked, newlines kept; C++'s extern "C" braces
    dropped (a header's declarations stay at file scope)."""
    text = re.sub(r'extern\s*"C"\s*\{', " ", text)
    text = re.sub(r"(#ifdef\s+__cplusplus\s*)\}", r"\1 ", text)
    out = re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                 lambda m: "\n" * m.group(0).count("\n") + " ", text, flags=re.S)
    return out


def definitions(code):
    """(name, static) of the functions defined at file scope."""
    found = []
    depth = 0
    start = 0
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                head = code[start:i]
                head = re.sub(r"^\s*#[^\n]*", "", head, flags=re.M)
                m = re.search(r"\b([A-Za-z_]\w*)\s*\(((?:[^()]|\([^()]*\))*)\)\s*(const)?\s*$",
                              head, re.S)
                if m and m.group(1) not in KEYWORDS and not re.search(r"[=]", head[:m.start()]) \
                        and not re.search(r"\b(struct|union|enum|typedef)\b", head[:m.start()]):
                    found.append((m.group(1), bool(re.search(r"\bstatic\b", head))))
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            start = i + 1
    return found


def prototypes(code):
    """The functions a file declares at file scope (a prototype: no body)."""
    found = set()
    depth = 0
    start = 0
    for i, ch in enumerate(code):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            head = re.sub(r"^\s*#[^\n]*", "", code[start:i], flags=re.M)
            m = re.search(r"\b([A-Za-z_]\w*)\s*\(((?:[^()]|\([^()]*\))*)\)\s*"
                          r"(?:[A-Z_]+\s*\([^()]*\)\s*)?$", head, re.S)
            if m and "=" not in head and not re.search(r"\btypedef\b", head):
                found.add(m.group(1))
            start = i + 1
    return found


def layer(path, order):
    parts = path.split("/")
    if parts[0] == "include":
        return "include"
    if parts[0] == "sim" and len(parts) > 2 and parts[1] in order:
        return parts[1]
    return None


def main():
    argv = sys.argv[1:]
    if "--self-test" in argv:
        return self_test()
    max_up = MAX_UP
    if "--max-up" in argv:
        k = argv.index("--max-up")
        max_up = int(argv[k + 1])
        del argv[k:k + 2]
    args = [a for a in argv if not a.startswith("--")]
    listing = "--list" in argv
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.abspath(root)
    order = sim_order()
    rank = {name: k + 1 for k, name in enumerate(order)}
    rank["include"] = 0
    files = []
    for top in ("sim", "include"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(SOURCES):
                    files.append(os.path.relpath(os.path.join(d, n), root))
    files.sort()
    exists = set(files)
    code = {f: strip(open(os.path.join(root, f), errors="replace").read()) for f in files}
    raw = {f: open(os.path.join(root, f), errors="replace").read() for f in files}

    defined = {}
    for f in files:
        for name, static in definitions(code[f]):
            if not static:
                defined.setdefault(name, set()).add(f)
    owner = {name: next(iter(fs)) for name, fs in defined.items() if len(fs) == 1}
    declared = {f: prototypes(code[f]) for f in files}
    public = set().union(*(declared[f] for f in files if f.startswith("include/")))

    edges = {}  # (from, to) -> kind
    for f in files:
        for m in re.finditer(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', raw[f], re.M):
            x = m.group(1)
            for cand in (os.path.normpath(os.path.join(os.path.dirname(f), x)),
                         os.path.normpath(os.path.join("include", x)),
                         os.path.normpath(os.path.join("sim", x))):
                if cand in exists:
                    if cand != f:
                        edges.setdefault((f, cand), "include")
                    break
        for name in set(re.findall(r"\b[A-Za-z_]\w*\b", code[f])):
            # A header's own declarations are no use (its macros and inlines call what it
            # declares: one interface); nor are the public face's calls of its own functions
            # (include/ is one interface, sim/ implements it).
            if (f.endswith((".h", ".cuh")) and name in declared[f]) or \
                    (f.startswith("include/") and name in public):
                continue
            g = owner.get(name)
            if g and g != f:
                edges.setdefault((f, g), "call " + name)

    graph = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)

    # Tarjan's strongly connected components, iteratively.
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for v0 in files:
        if v0 in index:
            continue
        work = [(v0, iter(graph.get(v0, [])))]
        index[v0] = low[v0] = counter[0]
        counter[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph.get(w, []))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))

    up = []
    for (a, b), kind in sorted(edges.items()):
        la, lb = layer(a, rank), layer(b, rank)
        if la is None or lb is None or la == lb:
            continue
        if rank[lb] > rank[la]:
            up.append((a, b, kind))

    kept = [c for c in comps if known(c)]
    comps = [c for c in comps if not known(c)]
    for comp in kept:
        print("known circle of %d files (layer_refs.py says why): %s" % (len(comp), " ".join(comp)))
    for comp in comps:
        print("circle of %d files: %s" % (len(comp), " ".join(comp)))
    if listing:
        for a, b, kind in up:
            print("up: %s -> %s (%s)" % (a, b, kind))
    includes = sum(1 for k in edges.values() if k == "include")
    print("layer_refs: %d references between files (%d includes, %d uses of another file's "
          "functions), %d circles (and %d known), %d references up (at most %d)"
          % (len(edges), includes, len(edges) - includes, len(comps), len(kept), len(up), max_up))
    return 1 if comps or len(up) > max_up else 0


def self_test():
    """A clean scratch tree passes; a call up, a circle of calls and one of includes each fail; a
    declaration alone is no reference."""
    me = os.path.abspath(__file__)
    clean = {
        "sim/core/a.h": "int a_f(void);\nint b_f(void); /* declared, never used here */\n",
        "sim/core/a.c": '#include "core/a.h"\nint a_f(void) { return 1; }\n',
        "sim/step/b.c": '#include "core/a.h"\nint b_f(void) { return a_f(); }\n',
    }
    planted = [
        ("a call up", {"sim/core/c.c": "int b_f(void);\nint c_f(void) { return b_f(); }\n"}),
        ("a circle of calls",
         {"sim/step/d.c": "int e_f(void);\nint d_f(void) { return e_f(); }\n",
          "sim/step/e.c": "int d_f(void);\nint e_f(void) { return d_f(); }\n"}),
        ("a circle of includes", {"sim/step/f.h": '#include "step/g.h"\n',
                                  "sim/step/g.h": '#include "step/f.h"\n'}),
    ]
    failed = 0

    def run(files):
        root = tempfile.mkdtemp()
        try:
            for path, text in files.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            return subprocess.run([sys.executable, me, root, "--max-up", "0"],
                                  capture_output=True, text=True)
        finally:
            shutil.rmtree(root)

    r = run(clean)
    if r.returncode != 0 or "0 circles (and 0 known), 0 references up" not in r.stdout:
        print("layer_refs self-test: the clean tree failed:\n" + r.stdout + r.stderr)
        failed = 1
    for what, extra in planted:
        r = run(dict(clean, **extra))
        if r.returncode == 0:
            print("layer_refs self-test: not caught: " + what)
            failed = 1
    if not failed:
        print("layer_refs self-test: ok, a clean tree passes and %d planted faults fail"
              % len(planted))
    return failed


if __name__ == "__main__":
    sys.exit(main())
