"""The ctypes mirrors of jitgemm/_capi.py against include/jitgemm/jitgemm.h: a C
program compiled against the header prints every struct's size and every
field's offset, and every JG_ constant the package uses; the package's NVFP4
scale shapes against the library's jg_nvfp4_sf_bytes. No GPU."""
import ctypes
import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import BUILD, REPO
from jitgemm import _capi as C
from jitgemm import _checks as K

VERSION_H = os.path.join(BUILD, "include", "jitgemm", "version.h")
CC = shlex.split(os.environ.get("CC", "cc"))


def abi_program():
    lines = ["#include <stdio.h>", "#include <stddef.h>", "#include <jitgemm/jitgemm.h>",
             "int main(void) {"]
    for struct, mirror in C.MIRRORS.items():
        lines.append(f'    printf("{struct} %zu\\n", sizeof({struct}));')
        for field, _ in mirror._fields_:
            lines.append(f'    printf("{struct}.{field} %zu\\n", offsetof({struct}, {field}));')
    for name in C.CONSTANTS:
        lines.append(f'    printf("{name} %lld\\n", (long long)({name}));')
    return "\n".join(lines + ["    return 0;", "}"]) + "\n"


@pytest.mark.skipif(not os.path.exists(VERSION_H) or not shutil.which(CC[0]),
                    reason="needs the meson build's version.h (build/) and a C compiler")
def test_mirrors_match_the_header(tmp_path):
    src, exe = tmp_path / "abi.c", tmp_path / "abi"
    src.write_text(abi_program())
    subprocess.run(CC + ["-std=c11", "-I", os.path.join(REPO, "include"),
                         "-I", os.path.join(BUILD, "include"), str(src), "-o", str(exe)],
                   check=True)
    c_says = dict(line.rsplit(" ", 1) for line in
                  subprocess.run([str(exe)], check=True, capture_output=True,
                                 text=True).stdout.splitlines())
    mine = {}
    for struct, mirror in C.MIRRORS.items():
        mine[struct] = ctypes.sizeof(mirror)
        for field, _ in mirror._fields_:
            mine[f"{struct}.{field}"] = getattr(mirror, field).offset
    mine.update(C.CONSTANTS)
    wrong = {k: (v, int(c_says[k])) for k, v in mine.items() if int(c_says[k]) != v}
    assert not wrong, f"ctypes (mirror, C) differ: {wrong}"


@pytest.mark.parametrize("layout", [C.JG_SF_ROW_MAJOR, C.JG_SF_SWIZZLED_128X4])
@pytest.mark.parametrize("rows,k", [(1, 16), (127, 256), (128, 64), (300, 4096), (7168, 2048)])
def test_nvfp4_scale_shapes_match_the_library(layout, rows, k):
    h, w = K.sf_shape(layout, rows, k)
    assert h * w == C.lib.jg_nvfp4_sf_bytes(layout, rows, k)


def test_version_is_the_builds():
    import jitgemm
    with open(os.path.join(REPO, "meson.build")) as f:
        head = f.read(400)
    assert f"version : '{jitgemm.__version__}'" in head


def test_in_context_launches_are_the_headers_and_used():
    """OPTIONAL_SIGNATURES name functions the header declares, with as many
    parameters; the library built from it has them, so the package launches
    through them (one foreign call a launch)."""
    with open(os.path.join(REPO, "include", "jitgemm", "jitgemm.h")) as f:
        header = " ".join(f.read().split())
    for name, (_, argtypes) in C.OPTIONAL_SIGNATURES.items():
        m = re.search(rf"JG_API jg_status {name}\(([^)]*)\);", header)
        assert m, f"{name} is not declared in jitgemm.h"
        assert len(m.group(1).split(",")) == len(argtypes), name
        assert hasattr(C.lib, name), f"the loaded library lacks {name}"
    assert C.IN_CONTEXT
