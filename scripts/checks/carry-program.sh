#!/usr/bin/env bash
# Makes a folder that carries a built trainbench to a machine with the same LibTorch (a pip torch of
# the same version) but without this machine's -dev packages or a network (scripts/checks/gpu-check.sh
# --exe): its two programs (trainbench and trainbench-torch, which trainbench hands the training
# commands to), stripped, and in lib/ every shared library they load that is neither LibTorch's
# (the torch folder and the CUDA libraries beside it, found there), nor the C and C++ runtimes, nor the
# GPU driver (the target machine's own).
#
#   scripts/checks/carry-program.sh BUILD_DIR DEST       (DEST/trainbench, DEST/trainbench-torch, DEST/lib/, DEST/MANIFEST)
set -euo pipefail
build=${1:?usage: carry-program.sh BUILD_DIR DEST}
dest=${2:?usage: carry-program.sh BUILD_DIR DEST}
programs=("$build/trainbench" "$build/trainbench-torch")
for exe in "${programs[@]}"; do
  [[ -x $exe ]] || { echo "carry-program: error: no program at $exe (build it first)" >&2; exit 2; }
done
rm -rf "$dest"
mkdir -p "$dest/lib"
for exe in "${programs[@]}"; do strip -o "$dest/$(basename "$exe")" "$exe"; done
# The runtimes every Linux machine has, LibTorch's own, and the driver's.
keep_out='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libresolv|libutil|libanl|libnsl|libstdc\+\+|libgcc_s|libcuda|libnvidia)\.'
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ): ${programs[*]} ($(git -C "$(dirname "$0")/../.." rev-parse --short=12 HEAD 2> /dev/null))"
  ldd "${programs[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
    if [[ $name =~ $keep_out || $path == */torch/lib/* || $path == */nvidia/* ]]; then
      echo "not carried: $name ($path)"
    else
      cp -L "$path" "$dest/lib/$name"
      echo "carried: $name ($path)"
    fi
  done
} > "$dest/MANIFEST"
du -sh "$dest" | cut -f1 | sed 's/^/carry-program: /; s/$/ in all/' >&2
