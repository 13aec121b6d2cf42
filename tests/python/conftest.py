"""pytest setup for the jitgemm package's tests.

Run from a checkout, they test the sources in python/ with the library of the
meson build in build/ (what scripts/test.sh does), unless JITGEMM_LIBRARY
names another library or JITGEMM_TEST_INSTALLED=1 asks for the installed
package (`pip install .`) as it is.
"""
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("JITGEMM_BUILD_DIR", os.path.join(REPO, "build"))

if os.environ.get("JITGEMM_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(REPO, "python"))
    if "JITGEMM_LIBRARY" not in os.environ and os.path.exists(os.path.join(BUILD, "libjitgemm.so")):
        os.environ["JITGEMM_LIBRARY"] = os.path.join(BUILD, "libjitgemm.so")


def sm90_devices():
    """The indices of the sm_90 GPUs torch sees (none without CUDA)."""
    import torch
    if not torch.cuda.is_available():
        return []
    return [i for i in range(torch.cuda.device_count())
            if torch.cuda.get_device_capability(i) == (9, 0)]


requires_sm90 = pytest.mark.skipif(not sm90_devices(), reason="needs an sm_90 (Hopper) GPU")
requires_two = pytest.mark.skipif(len(sm90_devices()) < 2, reason="needs two sm_90 GPUs")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private disk cache, and offline contexts made afresh (they read
    JITGEMM_CACHE_DIR when created)."""
    from jitgemm import _device
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("JITGEMM_CACHE_DIR", str(d))
    monkeypatch.setenv("JITGEMM_CACHE", "readwrite")
    saved = dict(_device._offline)
    _device._offline.clear()
    yield d
    _device._offline.clear()
    _device._offline.update(saved)
