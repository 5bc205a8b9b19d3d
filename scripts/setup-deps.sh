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
)
# `make bench` compares against PyTorch eager on the same LibTorch.
if [ "${TRAINBENCH_WITH_PYTHON:-0}" = 1 ]; then packages+=(python3-torch python3-torchvision python3-pil); fi

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
