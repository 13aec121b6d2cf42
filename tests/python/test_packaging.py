"""`pip install .` end to end, without a GPU: the wheel meson-python builds from
the repository holds the package with its own libjitgemm.so (and nothing of
the C install: no headers, tools or pkg-config file), and the package, once
installed, loads that copy of the library. Builds the library once more
(about a minute on two cores)."""
import os
import subprocess
import sys
import zipfile

import pytest

from conftest import REPO

pytest.importorskip("mesonpy", reason="needs meson-python (scripts/install-deps.sh installs it)")


def test_pip_install_builds_the_library_into_the_package(tmp_path):
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                    "-q", "-w", str(wheels), f"-Cbuild-dir={tmp_path / 'build'}", REPO],
                   check=True)
    (wheel,) = wheels.glob("jitgemm-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"jitgemm/__init__.py", "jitgemm/_ops.py", "jitgemm/libjitgemm.so"} <= names
    assert not [n for n in names if n.endswith(".h") or n.endswith(".pc") or "/bin/" in n]

    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(site), str(wheel)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("JITGEMM_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([sys.executable, "-c", "import jitgemm; print(jitgemm.library_path()); "
                          "print(jitgemm.__version__); print(jitgemm.__file__)"],
                         cwd=tmp_path, env=env, check=True, capture_output=True, text=True)
    path, version, init = out.stdout.split()
    assert path == str(site / "jitgemm" / "libjitgemm.so") and os.path.exists(path)
    assert init.startswith(str(site))
    import jitgemm
    assert version == jitgemm.__version__
