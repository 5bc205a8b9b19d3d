#!/usr/bin/env bash
# One prepared check for a GPU machine that has a pip `torch` (CUDA or ROCm) and no network: builds
# trainbench against that LibTorch, with the header-only dependencies from a carried folder (made by
# scripts/setup/vendor-headers.sh), then runs list, the quick suite, resnet50 in every precision and with
# TF32, an out-of-memory case, peak, the memory the card holds outside the caching allocator, memory and
# maxbatch --memory-limit 4G for resnet18 and a 2-layer BERT, maxbatch for bert at seq 512 in bf16,
# explain for mobilenet_v2, a one-rank NCCL case and NCCL all-reduces, and the seed2019 suite in bf16; it checks the NVML function types
# against nvml.h where this machine has one (scripts/checks/cuda-compile-check.sh), and ends with each
# measured case's energy (energy.txt: J per sample and mean power, from NVML on the GPU). Every
# results file, each step's output and a summary (steps.tsv: step, exit code, seconds) go under $OUT.
# A failing step is recorded and the script goes on. The whole check keeps within BUDGET_S seconds
# (default 570).
#
#   OUT=/tmp/out scripts/checks/gpu-check.sh [--third-party DIR] [--build-dir DIR] [--exe PROGRAM] [--cpu-smoke]
#
# --exe PROGRAM: a trainbench built elsewhere against the same LibTorch and carried here with the
# shared libraries it needs beside it in lib/ (scripts/checks/carry-program.sh): when it starts here, the build
# is skipped (its minutes go to the runs); when it does not, the script builds as without it.
#
# --cpu-smoke: run on the CPU, with every step cut to a tiny case, against the pip torch of python3
# ($PYTHON) where it has one, else Debian's LibTorch: proves the no-network build and the script's flow
# on a machine without a GPU (scripts/checks/bare-root-rehearsal.sh runs it in a root that looks like the GPU
# machine).
# BUDGET_S (default 570) and BUILD_S (the build step's own limit, default 360) in the environment
# stretch the limits for a slow machine.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
third_party=${TRAINBENCH_THIRD_PARTY:-$root/third_party}
build=""
smoke=0
carried=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --third-party) third_party=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --cpu-smoke) smoke=1; shift ;;
    --exe) carried=$2; shift 2 ;;
    *) echo "gpu-check: error: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
out=${OUT:-$root/out/gpu-check}
budget=${BUDGET_S:-570}
start=$(date +%s)
mkdir -p "$out"
log=$out/gpu-check.log
: > "$log"
printf 'step\texit\tseconds\n' > "$out/steps.tsv"

say() { echo "gpu-check: $*" | tee -a "$log" >&2; }
left() { echo $(( budget - ($(date +%s) - start) )); }

if [[ ! -f $third_party/include/CLI/CLI.hpp || ! -f $third_party/include/toml++/toml.h ]]; then
  say "error: no header-only dependencies in $third_party (make them with scripts/setup/vendor-headers.sh on a machine that has the Debian packages, and carry the folder)"
  exit 2
fi

# step NAME SECONDS COMMAND...: runs COMMAND with a time limit (SIGTERM first: trainbench then writes
# the cases it finished), stdout and stderr to $out/NAME.txt, and records its exit code.
step() {
  local name=$1 limit=$2; shift 2
  local remaining; remaining=$(left)
  (( limit > remaining )) && limit=$remaining
  if (( limit < 5 )); then
    say "$name: skipped, the time budget is spent"
    printf '%s\tskipped\t0\n' "$name" >> "$out/steps.tsv"
    return
  fi
  local t0; t0=$(date +%s)
  say "$name (at most ${limit}s): $*"
  timeout -k 15 "$limit" "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  local dt=$(( $(date +%s) - t0 ))
  printf '%s\t%s\t%s\n' "$name" "$rc" "$dt" >> "$out/steps.tsv"
  say "$name: exit $rc after ${dt}s$( ((rc == 124)) && echo ' (time limit)')"
}

# ---- what this machine has -------------------------------------------------------------------------
{
  echo "== date"; date -u
  echo "== uname"; uname -a
  echo "== nproc"; nproc
  echo "== cmake"; cmake --version 2>&1 | head -1
  echo "== c++"; c++ --version 2>&1 | head -1
  echo "== nvidia-smi"; nvidia-smi -L 2>&1; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.applications.graphics --format=csv 2>&1
  echo "== rocm-smi"; rocm-smi --showproductname 2>&1 | head -20
  echo "== nvcc"; command -v nvcc && nvcc --version 2>&1 | tail -2
  echo "== third_party"; cat "$third_party/VERSIONS" 2>&1
} > "$out/machine.txt" 2>&1

# The pip torch's folder first, then its CMake config: with only the config, find_library could take a
# system libtorch.so beside pip torch's headers (CMakeLists.txt refuses that).
python=${PYTHON:-python3}
torch_dir=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2> "$out/torch-import.txt")
if [[ -n $torch_dir ]]; then
  prefix="$torch_dir;$torch_dir/share/cmake"
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "hip", torch.version.hip,
                   "gpus", torch.cuda.device_count())' >> "$out/machine.txt" 2>&1
fi
if (( smoke )); then
  # The pip torch where there is one (the GPU machine's kind of LibTorch, on the CPU), else Debian's.
  [[ -n $torch_dir ]] || prefix=""
  device=cpu
  [[ -n $build ]] || build=$root/build-gpu-check-smoke
else
  if [[ -z $torch_dir ]]; then
    say "error: $python cannot import torch (see $out/torch-import.txt): this check needs a pip torch"
    exit 2
  fi
  device=cuda
  [[ -n $build ]] || build=$root/build-gpu-check
fi

# ---- a carried program, else the build -------------------------------------------------------------
exe=""
if [[ -n $carried ]]; then
  # Its lib/ (what this machine may lack), this machine's torch, and the CUDA libraries pip installed
  # beside torch (the program may name the CUDA runtime itself).
  lib_path=$(cd "$(dirname "$carried")" && pwd)/lib
  if [[ -n $torch_dir ]]; then
    lib_path+=":$torch_dir/lib"
    for d in "$torch_dir"/../nvidia/*/lib "$torch_dir"/../nvidia/*/*/lib; do [[ -d $d ]] && lib_path+=":$d"; done
  fi
  export LD_LIBRARY_PATH=$lib_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  step carried-version 30 "$carried" --version
  if [[ $(tail -n 1 "$out/steps.tsv" | cut -f2) == 0 ]]; then
    exe=$carried
    say "the carried program starts here: no build"
    cat "$out/carried-version.txt" | tee -a "$log" >&2
  else
    say "the carried program does not start here (see carried-version.txt): building"
    ldd "$carried" "$(dirname "$carried")/trainbench-torch" > "$out/carried-ldd.txt" 2>&1
  fi
fi
if [[ -z $exe ]]; then
configure=(cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTRAINBENCH_BUILD_TESTS=OFF
           "-DTRAINBENCH_THIRD_PARTY=$third_party")
[[ -n $prefix ]] && configure+=("-DCMAKE_PREFIX_PATH=$prefix")
# Ninja where there is one (the GPU machine has it): it schedules every module's objects at once.
command -v ninja > /dev/null && [[ ! -f $build/Makefile ]] && configure+=(-G Ninja)
step configure 240 "${configure[@]}"
if ! grep -q "trainbench: LibTorch" "$out/configure.txt"; then
  say "error: cmake did not configure (see $out/configure.txt)"
  exit 1
fi
grep "trainbench: " "$out/configure.txt" | tee -a "$log" >&2
if [[ $device == cuda ]] && grep -q "CUDA code OFF, HIP code OFF" "$out/configure.txt"; then
  say "warning: this LibTorch configured without CUDA or HIP (no CUDA toolkit found?): GPU cases will be refused"
fi
step build "${BUILD_S:-360}" cmake --build "$build" -j "$(nproc)"
exe=$build/trainbench
if [[ ! -x $exe ]]; then
  say "error: the build made no $exe (see $out/build.txt)"
  exit 1
fi

# The dlopen'd NVML calls' types against this machine's nvml.h (a line saying so where it has none).
step nvml-signatures 60 "$root/scripts/checks/cuda-compile-check.sh" --build-dir "$build" --only nvml
fi

# ---- runs --------------------------------------------------------------------------------------------
step version 30 "$exe" --version
# list counts every model's FLOPs: about a minute on 2 busy CPU cores.
step list 60 "$exe" list
if (( smoke )); then
  fast=(--warmup 1 --min-steps 2 --min-time 0 --max-time 1 --max-noise 100)
  tiny=convnet:channels=4,depth=2,image=8
  step quick 120 "$exe" run --case "$tiny:b2:fp32:nchw:cpu" --case "$tiny:b2:bf16:nchw:cpu" \
       --case "$tiny:b2:bf16-pure:nchw:cpu" "${fast[@]}" -o "$out/quick.json"
  # fp16 needs a GPU: that case is an error row and the step exits 1.
  step precisions 120 "$exe" run --case "$tiny:b2:fp16:nchw:cpu" --case "$tiny:b2:fp16-pure:nchw:cpu" \
       --tf32 on "${fast[@]}" -o "$out/precisions.json"
  step peak 120 "$exe" peak --device cpu --gemm-size 256 -o "$out/peak.json"
  step maxbatch-bert 180 "$exe" maxbatch --model bert --set layers=1 --set hidden=32 --set heads=2 --set vocab=50 --set seq=16 \
       --precision bf16 --device cpu --max-batch 8 "${fast[@]}" -o "$out/maxbatch-bert.json"
  step explain 120 "$exe" explain --model mobilenet_v2 --batch 1 --device cpu -o "$out/explain.json"
  step seed2019-bf16 180 "$exe" run --case "$tiny:b2:bf16:nchw:cpu" --case bilstm:embed=8,hidden=8,seq=6,vocab=50:b2:bf16:nchw:cpu \
       "${fast[@]}" -o "$out/seed2019-bf16.json"
  # --data on images: the JPEG and PNG decoders the build linked (from the carried folder on a machine
  # without their -dev packages).
  rm -rf "$build/images"
  step make-data 60 "$exe" make-data "$build/images" --images 16 --classes 2
  step data-images 120 "$exe" run --model resnet18 --batch 2 --data "$build/images" "${fast[@]}" -o "$out/data-images.json"
else
  # Short stopping rules: the check proves the GPU path and gives first numbers, not a study.
  step quick 75 "$exe" run --suite quick --device cuda --min-time 1.5 --max-time 3 --timeout 60 -o "$out/quick.json"
  # The new GPU code: every precision (fp16 runs the loss scaler), TF32 on, and an out-of-memory case.
  step precisions 60 "$exe" run --model resnet50 --batch 64 --precision fp32,fp16,bf16,fp16-pure,bf16-pure \
       --device cuda --min-time 1.5 --max-time 3 --timeout 50 -o "$out/precisions.json"
  step oom 25 "$exe" run --model bert --set seq=512 --batch 65536 --device cuda --timeout 20 -o "$out/oom.json"
  step peak 30 "$exe" peak --device cuda -o "$out/peak.json"
  # What the card holds outside the caching allocator once cuBLAS and cuDNN are set up (the runtime's
  # context, the libraries' handles): the fixed cost a card's size pays before any tensor.
  step gpu-fixed-costs 30 "$python" -c '
import torch
torch.cuda.init(); x = torch.randn(256, 256, device="cuda"); (x @ x).sum().item()
c = torch.nn.functional.conv2d(torch.randn(2, 3, 32, 32, device="cuda"), torch.randn(8, 3, 3, 3, device="cuda")); c.sum().item()
free, total = torch.cuda.mem_get_info(); reserved = torch.cuda.memory_reserved()
print(f"total {total} free {free} reserved {reserved} outside_allocator {total - free - reserved}")'
  # --memory-limit on a GPU caps the caching allocator: what memory --fits predicts from small batches
  # against what maxbatch finds under that cap, resnet18 and a 2-layer BERT at seq 128, 4 GiB.
  step memory-resnet18 45 "$exe" memory --model resnet18 --device cuda --fits 4G,8G --timeout 30 \
       -o "$out/memory-resnet18.json"
  step maxbatch-resnet18-4G 75 "$exe" maxbatch --model resnet18 --device cuda --memory-limit 4G --max-time 2 \
       --timeout 40 -o "$out/maxbatch-resnet18-4G.json"
  step memory-bert 45 "$exe" memory --model bert --set layers=2 --set seq=128 --device cuda --fits 4G,8G \
       --timeout 30 -o "$out/memory-bert.json"
  step maxbatch-bert-4G 75 "$exe" maxbatch --model bert --set layers=2 --set seq=128 --device cuda \
       --memory-limit 4G --max-time 2 --timeout 40 -o "$out/maxbatch-bert-4G.json"
  step tf32-on 25 "$exe" run --model resnet50 --batch 64 --tf32 on --device cuda --min-time 1 --max-time 2 \
       --timeout 20 -o "$out/tf32-on.json"
  # Data parallel through NCCL on the one GPU (docs/distributed.md): a one-rank case and the all-reduce.
  step nccl-one-rank 40 "$exe" launch --nproc 1 -- run --model resnet50 --batch 64 --device cuda --dist \
    --dist-backend nccl --min-time 1 --max-time 2 --timeout 30 -o "$out/nccl-one-rank.json"
  step nccl-allreduce 30 "$exe" launch --nproc 1 -- op allreduce:100K allreduce:64.5M --device cuda \
    --min-time 0.5 --max-time 1
  step explain 60 "$exe" explain --model mobilenet_v2 --batch 64 --device cuda -o "$out/explain.json"
  step maxbatch-bert 75 "$exe" maxbatch --model bert --set seq=512 --precision bf16 --device cuda \
       --start 64 --max-batch 2048 --max-time 2 --timeout 40 -o "$out/maxbatch-bert.json"
  # Last: it takes what time is left; on the limit trainbench writes the cases it finished.
  step seed2019-bf16 300 "$exe" run --suite seed2019 --precision bf16 --device cuda --warmup 2 --min-steps 3 \
       --min-time 0.3 --max-time 1.5 --timeout 60 -o "$out/seed2019-bf16.json"
fi

# ---- energy: every measured case of every results file --------------------------------------------
if command -v python3 > /dev/null; then
  python3 - "$out"/*.json > "$out/energy.txt" 2>&1 <<'PY'
import json, os, sys
def cell(x, spec):
    return "null" if x is None else format(x, spec)
print(f"{'file':<20} {'case':<52} {'throughput':>18} {'J/sample':>10} {'mean W':>8}  source")
for path in sys.argv[1:]:
    try:
        benchmarks = json.load(open(path)).get("benchmarks", [])
    except (OSError, ValueError):
        continue
    for b in benchmarks:
        if b.get("status") != "ok":
            continue
        tput = f"{b.get('throughput', 0):.1f} {b.get('unit', '')}"
        print(f"{os.path.basename(path):<20} {b.get('name', '?'):<52} {tput:>18} "
              f"{cell(b.get('energy_j_per_sample'), '.4g'):>10} {cell(b.get('mean_power_w'), '.1f'):>8}  "
              f"{b.get('energy_source') or 'none'}")
PY
  say "energy per measured case (energy.txt):"
  tee -a "$log" < "$out/energy.txt" >&2
else
  say "energy: no python3 to read the results files (the figures are in them: energy_j_per_sample, mean_power_w)"
fi

# The summary: each step's status and seconds, and its headline figure from its results file (the
# fastest ok case, and how many cases were ok, oom or error).
"$python" - "$out" > "$out/summary.tsv" 2> /dev/null <<'PY' || cp "$out/steps.tsv" "$out/summary.tsv"
import json, os, sys
out = sys.argv[1]
rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(out, "steps.tsv"))][1:]
print("step\tstatus\tseconds\theadline")
for name, code, seconds in rows:
    status = {"0": "ok", "skipped": "skipped", "124": "time limit"}.get(code, "exit " + code)
    headline = "-"
    path = os.path.join(out, name + ".json")
    if os.path.exists(path):
        try:
            f = json.load(open(path))
            b = f.get("benchmarks", [])
            ok = [x for x in b if x.get("status") == "ok"]
            counts = {s: sum(1 for x in b if x.get("status") == s) for s in ("ok", "oom", "error")}
            headline = " ".join(f"{v} {k}" for k, v in counts.items() if v)
            if ok:
                best = max(ok, key=lambda x: x.get("throughput", 0))
                headline += f"; best {best['throughput']:.4g} {best.get('unit', '')} ({best.get('name', '?')})"
            elif f.get("context", {}).get("peak"):
                peak = f["context"]["peak"]
                headline = "; ".join(f"{k} {v:.4g} GFLOP/s" for k, v in peak.get("gemm_gflops", {}).items())
                headline += f"; copy {peak.get('copy_gbps', 0):.4g} GB/s"
        except (OSError, ValueError, KeyError, TypeError):
            headline = "unreadable results"
    print(f"{name}\t{status}\t{seconds}\t{headline}")
PY
say "done in $(( $(date +%s) - start ))s; summary:"
# column(1) is not on every machine (a minimal root lacks it): the table as it is there.
{ column -t -s $'\t' "$out/summary.tsv" 2> /dev/null || cat "$out/summary.tsv"; } | tee -a "$log" >&2
ls -la "$out" >> "$log"
