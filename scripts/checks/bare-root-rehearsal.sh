#!/usr/bin/env bash
# Rehearses scripts/checks/gpu-check.sh where it can fail cheaply: in a bare Debian root that looks like the
# GPU machine (no Debian -dev package of trainbench's, no network), on this CPU machine.
#
#   scripts/checks/bare-root-rehearsal.sh [--root DIR] [--out DIR] [--fresh] [--prepare]
#
# --prepare: steps 1 and 2 only (the root and its torch), e.g. while another build keeps the cores busy.
#
# 1. debootstrap --variant=minbase bookworm into DIR (default /var/tmp/trainbench-bare-root; kept and
#    reused unless --fresh), then only what the GPU machine has: a C++ compiler, cmake, make and Python
#    with venv. No libtorch-dev, libturbojpeg0-dev, libpng-dev, libfmt-dev, CLI11, nlohmann or toml++.
# 2. torch==$TORCH_PIN (default 2.11.0) installed into a venv in the root from wheels downloaded
#    beforehand on this machine (pip download; pip's cache makes a second time quick).
# 3. The checkout (its tracked and untracked, not ignored, files) and the carried folder
#    (scripts/setup/vendor-headers.sh: header-only dependencies and the static image libraries) copied in; the
#    CUDA toolkit mounted read-only at /usr/local/cuda (the GPU machine has nvcc, and pip torch's CMake
#    configuration needs a toolkit).
# 4. gpu-check.sh --cpu-smoke run inside, in a network namespace of its own (unshare -n: no route out),
#    with the build and time limits stretched for 2 cores (BUILD_S, BUDGET_S). Its build folder
#    (/work/build in the root) is kept, so a second rehearsal compiles only what changed.
# Ends with gpu-check's summary table (step, status, seconds, headline figure); its files are in --out.
# Needs root (debootstrap, chroot, mount, unshare) and Debian's package mirror for step 1.
set -euo pipefail
root_src=$(cd "$(dirname "$0")/../.." && pwd)
bare=/var/tmp/trainbench-bare-root
out=$root_src/out/bare-root
fresh=0
prepare=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --root) bare=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --prepare) prepare=1; shift ;;
    *) echo "bare-root-rehearsal: error: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
pin=${TORCH_PIN:-2.11.0}
say() { echo "bare-root-rehearsal: $*" >&2; }
[[ $(id -u) == 0 ]] || { say "error: needs root (debootstrap, chroot, mount, unshare)"; exit 2; }
t0=$SECONDS

cleanup() {
  for m in usr/local/cuda proc dev; do mountpoint -q "$bare/$m" && umount -l "$bare/$m"; done
  return 0
}
trap cleanup EXIT

# ---- 1. the bare root -------------------------------------------------------------------------------
command -v debootstrap > /dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap > /dev/null; }
if (( fresh )); then cleanup; rm -rf "$bare"; fi
if [[ ! -x $bare/usr/bin/cmake ]]; then
  # This machine's Debian mirror (sources.list or deb822 .sources), the security archive aside.
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2> /dev/null |
           grep -E '^(deb |URIs:)' | grep -oE 'https?://[^ ]+' | grep -v security | head -1 || true)
  say "debootstrap minbase bookworm from ${mirror:-the default mirror} into $bare"
  debootstrap --variant=minbase bookworm "$bare" ${mirror:+"$mirror"} > "$bare.debootstrap.log" 2>&1 ||
    { say "error: debootstrap failed (see $bare.debootstrap.log)"; exit 1; }
  cp /etc/resolv.conf "$bare/etc/resolv.conf"
  chroot "$bare" apt-get install -y -qq --no-install-recommends g++ make cmake python3 python3-venv \
    ca-certificates > "$bare.apt.log" 2>&1 || { say "error: apt-get in the root failed (see $bare.apt.log)"; exit 1; }
fi
for pkg in libtorch-dev libturbojpeg0-dev libpng-dev libfmt-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev; do
  if chroot "$bare" dpkg-query -W -f='${Status}' "$pkg" 2> /dev/null | grep -q "install ok installed"; then
    say "error: $pkg is installed in $bare: not a bare root (use --fresh)"
    exit 1
  fi
done

# ---- 2. torch from wheels downloaded beforehand -------------------------------------------------------
wheels=$bare/wheels
if ! chroot "$bare" /opt/py/bin/python -c "import torch" > /dev/null 2>&1; then
  py_tag=$(chroot "$bare" python3 -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
  say "downloading torch==$pin wheels for cp$py_tag (pip's cache serves a second time)"
  mkdir -p "$wheels"
  # The same Python version here: pip picks the wheels this interpreter would install; else name the
  # manylinux tags the wheels use.
  tags=()
  if [[ $(python3 -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")') != "$py_tag" ]]; then
    tags=(--only-binary=:all: --python-version "$py_tag")
    for t in manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014; do tags+=(--platform "${t}_x86_64"); done
  fi
  python3 -m pip download --quiet --dest "$wheels" "${tags[@]}" "torch==$pin" ||
    { say "error: pip download torch==$pin failed"; exit 1; }
  chroot "$bare" python3 -m venv /opt/py
  chroot "$bare" /opt/py/bin/pip install --quiet --no-index --find-links /wheels "torch==$pin" ||
    { say "error: installing the wheels in the root failed"; exit 1; }
  rm -rf "$wheels"
fi

if (( prepare )); then say "prepared $bare in $((SECONDS - t0)) s"; exit 0; fi

# ---- 3. the checkout, the carried folder, the toolkit ------------------------------------------------
rm -rf "$bare/work/trainbench" "$bare/out" && mkdir -p "$bare/work/trainbench" "$bare/out"
(cd "$root_src" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents --preserve=timestamps -t "$bare/work/trainbench")
"$root_src/scripts/setup/vendor-headers.sh" "$bare/work/trainbench/third_party" > /dev/null
say "carried folder: $(du -sh "$bare/work/trainbench/third_party" | cut -f1)"
mkdir -p "$bare/usr/local/cuda" "$bare/proc" "$bare/dev"
mount --bind /proc "$bare/proc"
mount --bind /dev "$bare/dev"
if [[ -d /usr/local/cuda ]]; then
  mount --bind /usr/local/cuda "$bare/usr/local/cuda" && mount -o remount,bind,ro "$bare/usr/local/cuda"
fi

# ---- 4. the check, with no network ----------------------------------------------------------------------
say "gpu-check.sh --cpu-smoke in $bare, no network"
set +e
unshare -n chroot "$bare" /usr/bin/env -i PATH=/usr/local/cuda/bin:/usr/bin:/bin HOME=/root \
  OUT=/out PYTHON=/opt/py/bin/python BUILD_S="${BUILD_S:-1800}" BUDGET_S="${BUDGET_S:-3000}" \
  bash /work/trainbench/scripts/checks/gpu-check.sh --cpu-smoke --third-party /work/trainbench/third_party \
  --build-dir /work/build
rc=$?
set -e
rm -rf "$out" && mkdir -p "$out" && cp -r "$bare/out/." "$out/"
say "gpu-check exit $rc; files in $out; $((SECONDS - t0)) s in all"
[[ -f $out/summary.tsv ]] && column -t -s $'\t' "$out/summary.tsv"
exit "$rc"
