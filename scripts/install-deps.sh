#!/bin/sh
# Installs what libjitgemm builds and tests with, from Debian's packages
# (llvm-19-dev and clang-19: the LLVM backend, meson -Dllvm).
# The CUDA toolkit (>= 12.4: nvcc, NVRTC and headers under /usr/local/cuda)
# is a prerequisite that this script does not install.
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    meson ninja-build pkg-config gcc python3 python3-pip binutils \
    libxxhash-dev libjansson-dev llvm-19-dev clang-19 >/dev/null
# The SASS test disassembles with cuobjdump and nvdisasm. Toolkits installed
# without them (as on our CI image) get NVIDIA's own builds from PyPI.
# Without them that one test is skipped (exit 77), so a failure here only warns.
install_disassembler() {
    python3 -m pip install -q --disable-pip-version-check --break-system-packages \
        nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm 2>/dev/null ||
        python3 -m pip install -q --disable-pip-version-check \
            nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm || return 1
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
