#!/usr/bin/env bash
# Installs what trainbench needs to build and test on Debian 12, only what is missing.
set -euo pipefail

packages=(
  build-essential cmake git pkg-config
  libtorch-dev            # LibTorch 1.13 (CPU, oneDNN inside)
  libopenblas0-pthread    # required: the reference BLAS is ~35x slower on matrix products
  libgloo-dev             # c10d headers included by LibTorch's distributed API
  libcli11-dev nlohmann-json3-dev libfmt-dev libtomlplusplus-dev
  googletest libgtest-dev
  libturbojpeg0-dev       # --data: JPEG decode with DCT-domain scaling (src/data)
  libpng-dev              # --data: PNG files in image folders
  libjs-chart.js chromium  # the HTML report inlines Chart.js; its test opens the page in headless Chromium
  libsqlite3-dev          # the results store (src/store): SQLite by default
  libpq-dev               # the results store on a PostgreSQL server (--store postgresql://...)
  postgresql              # its tests start a real server (initdb, pg_ctl) in a temporary folder
  openmpi-bin             # the data-parallel tests start ranks with a real mpirun
  iproute2                # ... and two nodes in two network namespaces (ip netns)
)
torch=${TRAINBENCH_TORCH:-debian}   # debian | pip (scripts/setup/torch-select.sh)
# TORCH=pip: a venv for the pinned PyPI torch (scripts/setup/torch-select.sh installs it).
if [ "$torch" = pip ]; then packages+=(python3 python3-venv); fi
# `make bench` compares against PyTorch eager on the same LibTorch: Debian's python3-torch for 1.13;
# for pip, torchvision and Pillow come from PyPI into the same venv, at the version matching its torch.
if [ "${TRAINBENCH_WITH_PYTHON:-0}" = 1 ] && [ "$torch" = debian ]; then
  packages+=(python3-torch python3-torchvision python3-pil)
fi
packages+=(ccache)  # a rebuild of unchanged sources in the same folder compiles nothing again

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# LibTorch must find OpenBLAS through the libblas.so.3 alternative, not the reference BLAS.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
case "$blas" in
  *openblas*) ;;
  *) echo "setup: warning: libblas.so.3 resolves to '${blas:-nothing}', not OpenBLAS; results will be slow" >&2 ;;
esac

if [ "${TRAINBENCH_WITH_PYTHON:-0}" = 1 ] && [ "$torch" = pip ]; then
  py=$("$(dirname "$0")/torch-select.sh" python pip)
  # torchvision's release that pairs with the venv's torch (2.x.y pairs with 0.(x+15).y).
  tv=$("$py" -c 'import torch; M, m, p = torch.__version__.split("+")[0].split(".")[:3]; print(f"0.{int(m) + 15}.{p}")')
  if ! "$py" -c "import torchvision, PIL, numpy" > /dev/null 2>&1; then
    echo "setup: installing torchvision==$tv pillow numpy into $(dirname "$(dirname "$py")")"
    "$py" -m pip install --quiet "torchvision==$tv" pillow numpy
  fi
fi
