#!/usr/bin/env bash
# Which LibTorch trainbench builds against: TORCH=auto|debian|pip (the Makefile passes it).
#
#   scripts/setup/torch-select.sh kind TORCH       prints debian or pip (auto resolved; installs nothing)
#   scripts/setup/torch-select.sh install TORCH    pip: makes the venv and installs the pinned torch when missing
#   scripts/setup/torch-select.sh cmake-args TORCH prints the cmake arguments that select that LibTorch
#   scripts/setup/torch-select.sh python TORCH     prints the Python whose torch matches the build (the bench peer)
#
# debian: Debian's libtorch-dev (1.13, CPU).
# pip:    the LibTorch inside a Python torch. TORCH=pip installs the pinned torch (the GPU machine's
#         version) into a venv kept outside the clone, so that every clone on this machine, CI's included,
#         reuses it: $TORCH_VENV, else ${XDG_CACHE_HOME:-~/.cache}/trainbench/torch-$TORCH_PIN.
# auto:   pip when a Python torch >= 2.0 is installed (that venv, else python3 on PATH), else debian.
set -euo pipefail
pin=${TORCH_PIN:-2.11.0}
venv=${TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/trainbench/torch-$pin}

die() { echo "torch-select: error: $*" >&2; exit 2; }

# A Python that imports a torch >= 2.0, or nothing.
python_with_torch2() {
  local py
  for py in "$venv/bin/python" "$(command -v python3 || true)"; do
    [[ -n $py && -x $py ]] || continue
    if "$py" -c 'import sys, torch; sys.exit(0 if int(torch.__version__.split(".")[0]) >= 2 else 1)' \
      > /dev/null 2>&1; then
      echo "$py"
      return
    fi
  done
}

kind_of() {
  case $1 in
    debian | pip) echo "$1" ;;
    auto) if [[ -n $(python_with_torch2) ]]; then echo pip; else echo debian; fi ;;
    *) die "TORCH=$1: expected auto, debian or pip" ;;
  esac
}

# The Python whose torch a pip build uses: the venv when it has one, else python3 on PATH.
pip_python() {
  local py
  py=$(python_with_torch2)
  [[ -n $py ]] || die "no Python with torch >= 2.0 (run: make test TORCH=pip, which installs torch==$pin into $venv)"
  echo "$py"
}

install_pip() {
  if [[ -x $venv/bin/python ]] && "$venv/bin/python" -c "import torch" > /dev/null 2>&1; then
    echo "torch-select: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)' 2> /dev/null) in $venv"
    return
  fi
  echo "torch-select: installing torch==$pin into $venv (about 4.6 GB with its CUDA libraries)"
  python3 -m venv "$venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  local t0=$SECONDS
  "$venv/bin/pip" install --quiet "torch==$pin" || die "pip install torch==$pin into $venv failed"
  echo "torch-select: installed torch==$pin in $((SECONDS - t0)) s"
}

cmd=${1:-}
torch=${2:-auto}
case $cmd in
  kind) kind_of "$torch" ;;
  install) [[ $(kind_of "$torch") == pip && $torch == pip ]] && install_pip || true ;;
  cmake-args)
    if [[ $(kind_of "$torch") == pip ]]; then
      py=$(pip_python)
      dir=$("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2> /dev/null)
      # The torch folder itself comes first, so that its lib/ is searched before the system's: with only
      # share/cmake, Torch's find_library would take Debian's libtorch.so where libtorch-dev is installed.
      echo "-DCMAKE_PREFIX_PATH=$dir;$dir/share/cmake"
    fi
    ;;
  python)
    if [[ $(kind_of "$torch") == pip ]]; then pip_python; else echo /usr/bin/python3; fi
    ;;
  *) die "usage: $0 kind|install|cmake-args|python auto|debian|pip" ;;
esac
