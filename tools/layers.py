#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bx.ko's layers, checked on the built objects' symbols (make style).

  tools/layers.py [--kbuild FILE] [--objs DIR] [--doc FILE] [--graph]
  tools/layers.py --selftest

Kbuild names the module's files, in layers from the lowest up
(bx-layers, then one bx-LAYER list each). A file "calls" another when its
object has an undefined symbol that the other's object defines, as `nm`
shows them: a direct call, or a function or variable named in the code.
A callback the upper layer registered (an ops table, a receive handler, a
work item it set up) is not a symbol reference and needs nothing here.

Fails on a kmod/*.c that Kbuild does not place in a layer, on any call
to a higher layer, and on a group of files that all reach each other (a
call cycle) of more than MAX_CYCLE files. There is no list of exceptions.
The tracepoints' own symbols (__tracepoint_*, defined where
CREATE_TRACE_POINTS is) are the tracing machinery, not calls.

Fails too on a global symbol not named after its file: FILE.o defines
bx_FILE, bx_FILE_*, bx_FILEs_* (its objects together, as peer.c's
bx_peers_each) or, for a FILE that is a plural, bx_FILE-less-s_*
(conns.c's bx_conn_alloc). By rule, not by list: a module parameter's
variable is bx_NAME, where the object defines __param_NAME
(module_param's); init_module and cleanup_module are module_init's and
module_exit's; a file generated from the netlink spec ("auto-generated"
in its first lines) keeps the generator's names.
Documentation/bx.rst's table of the files (--doc) must list Kbuild's
layers and each one's files, no more and no fewer.
--graph prints every call between two files as well.
"""
import glob
import os
import re
import subprocess
import sys

MAX_CYCLE = 3
SKIP = ("__tracepoint_", "__traceiter_", "__SCK__", "__SCT__",
        "__probestub_")


def kbuild_layers(path):
    """[(layer name, [file, ...]), ...] from Kbuild, lowest first."""
    text = re.sub(r"\\\n", " ", open(path).read())
    var = {}
    for line in text.splitlines():
        m = re.match(r"^(bx-[A-Za-z0-9_-]+)\s*:?=\s*(.*)$", line)
        if m:
            var[m.group(1)] = m.group(2).split()
    if "bx-layers" not in var:
        sys.exit(f"layers: {path} has no bx-layers")
    out = []
    for name in var["bx-layers"]:
        files = var.get(f"bx-{name}")
        if files is None:
            sys.exit(f"layers: {path}: layer {name} has no bx-{name} list")
        out.append((name, files))
    return out


def symbols(objs):
    """{file: (defined, undefined)} from `nm` of each object, and
    {file: its module parameters' names}."""
    res, params = {}, {}
    for o in objs:
        f = os.path.basename(o)[:-2]
        d, u, pm = set(), set(), set()
        out = subprocess.run(["nm", o], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if not p or p[-1].startswith(SKIP):
                continue
            if len(p) == 3 and p[1] in "TDBRV":
                d.add(p[2])
            elif len(p) == 3 and p[1] == "r" and \
                    p[2].startswith("__param_") and \
                    not p[2].startswith("__param_str_"):
                pm.add(p[2][len("__param_"):])
            elif len(p) == 2 and p[0] == "U":
                u.add(p[1])
        res[f] = (d, u)
        params[f] = pm
    return res, params


DOC_BLOCK = "The files, by the layers of ``Kbuild``::"


def doc_layers(path):
    """{layer: [file, ...]} from the literal block after DOC_BLOCK in the
    document at path: a line "   LAYER   FILE.c   what" starts a layer,
    "                FILE.c   what" continues it (as does a line whose
    first word is a note in parentheses); None without it."""
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return None
    if DOC_BLOCK not in lines:
        return None
    out, cur = {}, None
    for line in lines[lines.index(DOC_BLOCK) + 1:]:
        if line and not line.startswith(" "):
            break
        m = re.match(r"^   (\S+)?\s+([\w-]+)\.c\s", line)
        if not m:
            continue
        # "(host-" "testable)": a note under the layer's name
        if m.group(1) and re.fullmatch(r"[a-z]+", m.group(1)):
            cur = m.group(1)
        out.setdefault(cur, []).append(m.group(2))
    return out


def check_doc(layers, path):
    """The document's table of files has Kbuild's layers and files."""
    doc = doc_layers(path)
    if doc is None:
        return [f"{path} has no \"{DOC_BLOCK}\" block"]
    bad = []
    for name, files in layers:
        got = doc.pop(name, [])
        if sorted(got) != sorted(files):
            bad.append(f"{os.path.basename(path)}'s layer {name}: "
                       f"{' '.join(sorted(got)) or 'none'}; Kbuild's: "
                       f"{' '.join(sorted(files))}")
    for name in doc:
        bad.append(f"{os.path.basename(path)} has a layer {name} Kbuild has not")
    return bad


MODULE_ENTRIES = ("init_module", "cleanup_module")


def generated(src):
    """Whether kmod/FILE.c says it was generated."""
    try:
        with open(src) as fh:
            return "auto-generated" in fh.read(400)
    except OSError:
        return False


def misnamed(syms, params, top):
    """[(file, symbol)]: global symbols not named after their file."""
    bad = []
    for f, (d, _) in sorted(syms.items()):
        if generated(os.path.join(top, "kmod", f + ".c")):
            continue
        g = f.replace("-", "_")
        pre = (f"bx_{g}_", f"bx_{g}s_")
        if g.endswith("s"):
            pre += (f"bx_{g[:-1]}_",)
        ok = {f"bx_{g}", *MODULE_ENTRIES}
        ok |= {f"bx_{p}" for p in params.get(f, ())}
        bad += [(f, s) for s in sorted(d)
                if s not in ok and not s.startswith(pre)]
    return bad


def graph(syms):
    defs = {}
    for f, (d, _) in syms.items():
        for s in d:
            defs[s] = f
    g = {f: {} for f in syms}
    for f, (_, u) in syms.items():
        for s in u:
            t = defs.get(s)
            if t and t != f:
                g[f].setdefault(t, []).append(s)
    return g


def cycles(g):
    """Strongly connected components (Tarjan), largest first."""
    idx, low, st, on, comps, n = {}, {}, [], set(), [], [0]

    def visit(v):
        idx[v] = low[v] = n[0]
        n[0] += 1
        st.append(v)
        on.add(v)
        for w in g[v]:
            if w not in idx:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            c = []
            while True:
                w = st.pop()
                on.discard(w)
                c.append(w)
                if w == v:
                    break
            comps.append(sorted(c))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in idx:
            visit(v)
    return sorted(comps, key=len, reverse=True)


def check(layers, syms, srcs, show_graph=False, params=None, top=None):
    bad = []
    for f, s in misnamed(syms, params or {}, top or "."):
        bad.append(f"{s} (in {f}.o) is not named after its file")
    level, lname = {}, {}
    for i, (name, files) in enumerate(layers):
        for f in files:
            if f in level:
                bad.append(f"{f} is in two layers ({lname[f]}, {name})")
            level[f], lname[f] = i, name
    for f in sorted(srcs):
        if f not in level:
            bad.append(f"kmod/{f}.c is in no layer of Kbuild")
    g = graph(syms)
    for f in sorted(g):
        for t, ss in sorted(g[f].items()):
            if show_graph:
                print(f"  {f} -> {t}: {', '.join(sorted(ss))}")
            if f in level and t in level and level[t] > level[f]:
                bad.append(f"{f} ({lname[f]}) calls up into {t} "
                           f"({lname[t]}): {', '.join(sorted(ss))}")
    big = cycles(g)[0] if g else []
    print(f"layers: largest call cycle: {len(big)} of {len(g)} files"
          f"{': ' + ' '.join(big) if len(big) > 1 else ''}")
    if len(big) > MAX_CYCLE:
        bad.append(f"a call cycle of {len(big)} files (at most "
                   f"{MAX_CYCLE}): {' '.join(big)}")
    for b in bad:
        print(f"layers: {b}")
    return not bad


def main():
    args = sys.argv[1:]
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    kbuild = os.path.join(top, "Kbuild")
    doc = os.path.join(top, "Documentation", "bx.rst")
    objdir = os.path.join(top, "kmod")
    show = selftest = False
    while args:
        a = args.pop(0)
        if a == "--kbuild":
            kbuild = args.pop(0)
        elif a == "--doc":
            doc = args.pop(0)
        elif a == "--objs":
            objdir = args.pop(0)
        elif a == "--graph":
            show = True
        elif a == "--selftest":
            selftest = True
        else:
            sys.exit(__doc__)
    objs = [o for o in glob.glob(os.path.join(objdir, "*.o"))
            if not o.endswith(".mod.o")]
    if not objs:
        sys.exit(f"layers: no objects in {objdir}/ (build the module first)")
    srcs = [os.path.basename(c)[:-2]
            for c in glob.glob(os.path.join(top, "kmod", "*.c"))]
    layers = kbuild_layers(kbuild)
    syms, params = symbols(objs)
    if not selftest:
        ok = check(layers, syms, srcs, show, params, top)
        for b in check_doc(layers, doc):
            print(f"layers: {b}")
            ok = False
        print("layers: clean" if ok else "layers: FAILED")
        return 0 if ok else 1
    # A resource calling an operation, as a careless change would: the
    # lowest layer's first file uses a symbol of the highest layer's.
    low = next(f for f in layers[0][1] if f in syms)
    high, sym = next((f, min(s for s in syms[f][0] if s.startswith("bx_")))
                     for f in reversed(layers[-1][1])
                     if f in syms and any(s.startswith("bx_")
                                          for s in syms[f][0]))
    if not check(layers, syms, srcs, params=params, top=top):
        print("layers: selftest: the tree itself fails")
        return 1
    syms[low][1].add(sym)
    if check(layers, syms, srcs, params=params, top=top):
        print("layers: selftest: a planted upward call passed")
        return 1
    print(f"layers: selftest: the planted call {low} -> {high} ({sym}) "
          "was caught")
    syms[low][1].discard(sym)
    # A global function of the lowest layer's first file, named after
    # another file.
    stray = f"bx_{high.replace('-', '_')}_stray"
    syms[low][0].add(stray)
    if check(layers, syms, srcs, params=params, top=top):
        print(f"layers: selftest: a planted {stray} in {low}.o passed")
        return 1
    print(f"layers: selftest: the planted {stray} in {low}.o was caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
