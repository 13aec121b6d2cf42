#!/usr/bin/env python3
"""The library's layers point one way: src/util <- src/codegen <- src/runtime.

Code generation knows no driver, no NVRTC, no disk and no GPU; the utilities
know neither of the others. Checked two ways, so that neither an include nor a
call can slip past:

- includes: no file of a lower layer includes a higher layer's header (or
  jg_internal.h, which includes them all), nor the CUDA driver's or NVRTC's
  headers; the library's files include their own layer's header, not
  jg_internal.h (for tests and tools);
- symbols: in the internal static library, no object of a lower layer refers
  to a function or variable that a higher layer's object defines, nor to the
  driver's or NVRTC's functions; and no two objects refer to each other,
  directly or round a longer cycle (each file's dependencies stay one-way).

    check_layers.py SOURCE_ROOT path/to/libjitgemm_internal.a
"""
import os
import re
import subprocess
import sys

LAYERS = ["util", "codegen", "runtime"]  # each may use those before it
# Headers only the runtime may include: the driver's and NVRTC's.
RUNTIME_ONLY = {"cuda.h", "nvrtc.h", "cudaTypedefs.h", "cuda_runtime.h", "cuda_runtime_api.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def layer_of_header(name):
    """The layer an included header belongs to, or None (system, templates)."""
    if name == "jg_internal.h":
        return "runtime"  # it includes every layer
    head = name.split("/")[0]
    return head if head in LAYERS and "/" in name else None


def check_includes(root):
    problems = []
    for layer in LAYERS:
        folder = os.path.join(root, "src", layer)
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(folder, name)
            text = open(path, encoding="utf-8").read()
            for kind, inc in INCLUDE.findall(text):
                where = f"src/{layer}/{name}"
                if kind == '"' and inc == "jg_internal.h":
                    problems.append(f"{where} includes jg_internal.h: include "
                                    f"{layer}/{layer}.h (jg_internal.h is for tests and tools)")
                    continue
                inc_layer = layer_of_header(inc) if kind == '"' else None
                if inc_layer and LAYERS.index(inc_layer) > LAYERS.index(layer):
                    problems.append(f"{where} ({layer}) includes {inc} ({inc_layer})")
                if layer != "runtime" and os.path.basename(inc) in RUNTIME_ONLY:
                    problems.append(f"{where} ({layer}) includes {inc}: only the runtime "
                                    "talks to the driver and NVRTC")
    return problems


def layer_of_object(member):
    """The layer of an archive member, from the source path meson names it by."""
    base = os.path.basename(member)
    for layer in LAYERS:
        if base.startswith(f"src_{layer}_"):
            return layer, base[len("src_"):-len(".c.o")].replace("_", "/", 1) + ".c"
    if "jg_templates" in base:  # the embedded templates: code generation's data
        return "codegen", "jg_templates.c (generated)"
    return None, base


def read_symbols(archive):
    """{object: (layer, file, defined set, undefined set)} from nm."""
    out = subprocess.run(["nm", "-A", archive], check=True, capture_output=True,
                         text=True).stdout
    objects = {}
    for line in out.splitlines():
        # "archive:member:  U name" or "archive:member:0000 T name"
        head, _, rest = line.rpartition(":")
        member = head.split(":", 1)[1] if ":" in head else head
        fields = rest.split()
        if len(fields) < 2:
            continue
        kind, name = fields[-2], fields[-1]
        entry = objects.setdefault(member, (set(), set()))
        if kind == "U":
            entry[1].add(name)
        elif kind.isupper():  # global definitions only
            entry[0].add(name)
    return objects


def check_symbols(archive):
    problems = []
    objects = read_symbols(archive)
    owner = {}  # symbol -> object defining it
    info = {}
    for member, (defined, undefined) in objects.items():
        layer, name = layer_of_object(member)
        if layer is None:
            problems.append(f"{name}: an object of no known layer in {archive}")
            continue
        info[member] = (layer, name)
        for sym in defined:
            owner[sym] = member
    edges = {m: set() for m in info}
    for member, (layer, name) in info.items():
        for sym in sorted(objects[member][1]):
            if layer != "runtime" and (re.match(r"cu[A-Z]", sym) or sym.startswith("nvrtc")):
                problems.append(f"{name} ({layer}) calls {sym}: only the runtime talks to the "
                                "driver and NVRTC")
            target = owner.get(sym)
            if target is None or target == member:
                continue
            edges[member].add(target)
            t_layer, t_name = info[target]
            if LAYERS.index(t_layer) > LAYERS.index(layer):
                problems.append(f"{name} ({layer}) uses {sym} of {t_name} ({t_layer})")
    problems += [f"files that use each other, round a cycle: {', '.join(info[m][1] for m in c)}"
                 for c in cycles(edges)]
    return problems, len(info)


def cycles(edges):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, archive = sys.argv[1], sys.argv[2]
    problems = check_includes(root)
    sym_problems, count = check_symbols(archive)
    problems += sym_problems
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"layers: ok ({count} objects; util <- codegen <- runtime, no cycles)")


if __name__ == "__main__":
    main()
