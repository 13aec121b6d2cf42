#!/bin/sh
# Installs what libjitgemm builds and tests with, from Debian's packages.
# The CUDA toolkit (>= 12.4: nvcc, NVRTC and headers under /usr/local/cuda)
# is a prerequisite that this script does not install.
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    meson ninja-build pkg-config gcc python3 python3-pip binutils \
    libxxhash-dev libjansson-dev >/dev/null
# pip into the python3 on PATH; Debian's own refuses without
# --break-system-packages (PEP 668), other pythons may not know the flag.
pip_install() {
    python3 -m pip install -q --disable-pip-version-check --break-system-packages "$@" \
        2>/dev/null || python3 -m pip install -q --disable-pip-version-check "$@"
}
# The Python package (pip install ., tests/python): meson-python builds it,
# PyTorch runs it, pytest tests it; all from PyPI. PyPI's torch for Linux is
# the CUDA build: with its NVIDIA libraries about 5.3 GB installed and 80 s
# here; without a GPU it runs on the CPU, which the CPU-only tests need.
# meson-python without its PyPI meson: it runs the meson on PATH, Debian's,
# so that one meson configures every build directory.
pip_install torch numpy pytest packaging pyproject-metadata
pip_install --no-deps "meson-python>=0.15"
# The SASS test disassembles with cuobjdump and nvdisasm. Toolkits installed
# without them (as on our CI image) get NVIDIA's own builds from PyPI.
# Without them that one test is skipped (exit 77), so a failure here only warns.
install_disassembler() {
    pip_install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm || return 1
    bin=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "bin"))') ||
        return 1
    for tool in cuobjdump nvdisasm; do
        $SUDO ln -sf "$bin/$tool" /usr/local/bin/$tool || return 1
    done
}
if ! command -v cuobjdump >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/cuobjdump ]; then
    install_disassembler ||
        echo "warning: no cuobjdump/nvdisasm: the SASS test will be skipped" >&2
fi
echo "dependencies installed"
