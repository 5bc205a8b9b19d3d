#!/usr/bin/env bash
# Compiles, syntax only, every translation unit with a CUDA or HIP branch with that branch switched on,
# on a machine without a GPU: against this LibTorch's own c10/cuda and ATen/cuda headers (Debian's
# libtorch-dev 1.13 ships them) and a CUDA toolkit's headers. Also checks the NVML function types that
# core/gpu_clock.cpp opens with dlopen against the toolkit's nvml.h, where it has one. A typo or a
# wrong API call in GPU-only code then fails here instead of on the first GPU machine.
#
#   scripts/checks/cuda-compile-check.sh [--build-dir DIR] [--jobs N] [--only REGEX] [--skip-code N]
#
# --build-dir: a configured CPU build (default build/): its compile_commands.json gives each file's
#   exact flags, and its precompiled <torch/torch.h>, once built, makes each compile a few seconds.
# --only: compile only the files whose path matches REGEX (grep -E), e.g. --only 'device|nvml'.
# --skip-code: the exit code when there is nothing to check (no toolkit; a GPU build, which compiles
#   the GPU branches itself, without nvml.h); default 0. ctest's cuda_compile_check passes 77 and shows "Skipped".
# CUDA_HOME (default /usr/local/cuda) names the toolkit. Exit 1 when any file fails, 2 on bad usage.
#
# What it still catches that the pip torch 2.x CUDA build (make test TORCH=pip) does not: the `hip`
# configuration (TRAINBENCH_WITH_HIP=1) of the files with a HIP branch, and the NVML types. No ROCm
# headers are here: the hip configuration compiles against the CUDA-named LibTorch API that a ROCm
# LibTorch also provides, so it checks our code, not ROCm's headers. CUDA_CHECK_CUDA=1 adds the `cuda`
# configuration (TRAINBENCH_WITH_CUDA=1) of every such file against 1.13's headers, which the pip
# build compiles for real (docs/methodology.md, "GPU code and what CI compiles").
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
jobs=$(nproc 2> /dev/null || echo 2)
skip_code=0
only=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --only) only=${2:?}; shift 2 ;;
    --skip-code) skip_code=${2:?}; shift 2 ;;
    *) echo "cuda-compile-check: error: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "cuda-compile-check: error: --jobs '$jobs' is not a positive count" >&2; exit 2; }
# The build folder as an absolute path: the compilation database names files absolutely, and the
# compiles below run from other folders (a relative --build-dir matched 2 of 5 files).
if [[ -d $build ]]; then build=$(cd "$build" && pwd); fi
cuda_home=${CUDA_HOME:-/usr/local/cuda}
say() { echo "cuda-compile-check: $*"; }

if [[ ! -f $cuda_home/include/cuda_runtime_api.h ]]; then
  say "skipped: no CUDA toolkit headers at $cuda_home/include (set CUDA_HOME)"
  exit "$skip_code"
fi
db=$build/compile_commands.json
if [[ ! -f $db ]]; then
  say "error: $db is missing: configure a build first (cmake -S . -B $build)" >&2
  exit 2
fi
gpu_build=0
if grep -q -e '-DTRAINBENCH_WITH_CUDA=1' -e '-DTRAINBENCH_WITH_HIP=1' "$db"; then
  gpu_build=1
  say "GPU branches: not compiled here, $build is a GPU build that compiles them itself (NVML types only)"
fi

# "FILE<TAB>COMMAND" for each entry of the compilation database, the command's JSON escapes undone
# (CMake writes "directory", "command", "file" in that order, one per line).
entries=$(sed -n -e 's/^  "command": "\(.*\)",$/C\1/p' -e 's/^  "file": "\(.*\)",\{0,1\}$/F\1/p' "$db" |
          awk '/^C/ { cmd = substr($0, 2) } /^F/ { print substr($0, 2) "\t" cmd }' |
          sed -e 's/\\"/"/g' -e 's/\\\\/\\/g')
command_for() { awk -F'\t' -v f="$1" '$1 == f { print $2; exit }' <<< "$entries"; }

# The LibTorch include folder: the parent of torch/csrc/api/include in the flags.
torch_api=$(grep -o -m1 -e '-isystem [^ ]*/torch/csrc/api/include' <<< "$entries" | head -1 | cut -d' ' -f2)
torch_include=${torch_api%/torch/csrc/api/include}
[[ -n $torch_api ]] || torch_include=/usr/include
if (( ! gpu_build )) && [[ ! -f $torch_include/c10/cuda/CUDAMacros.h ]]; then
  say "skipped: this LibTorch ($torch_include) ships no c10/cuda headers"
  exit "$skip_code"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/trainbench-cuda-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The one generated header that LibTorch's CUDA headers include and Debian's package lacks.
mkdir -p "$work/include/c10/cuda/impl"
cat > "$work/include/c10/cuda/impl/cuda_cmake_macros.h" <<'EOF'
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
EOF

# The translation units: sources with a GPU branch; a header with one stands for its own .cpp.
declare -a units=()
while IFS= read -r f; do
  case $f in
    *.h) f=${f%.h}.cpp; [[ -f $root/$f ]] || { say "error: $f.h has a GPU branch and no $f to compile it" >&2; exit 1; } ;;
  esac
  [[ " ${units[*]-} " == *" $f "* ]] || units+=("$f")
done < <( ((gpu_build)) || (cd "$root" && grep -rlE 'TRAINBENCH_WITH_(CUDA|HIP)' src tests --include='*.cpp' --include='*.h' | sort))

declare -a jobs_list=()  # "CONFIG FILE TEMPLATE_FILE"
for f in "${units[@]}"; do
  # The CUDA branches are compiled and linked for real by the pip torch 2.x build (make test TORCH=pip,
  # which CI runs); the syntax-only cuda configuration is kept for a machine that builds only 1.13.
  (( ${CUDA_CHECK_CUDA:-0} )) && jobs_list+=("cuda $f $f")
  grep -q 'TRAINBENCH_WITH_HIP' "$root/$f" "$root/${f%.cpp}.h" 2> /dev/null && jobs_list+=("hip $f $f")
done
nvml_h=""
for dir in "$cuda_home/include" "$cuda_home"/targets/*/include /usr/include; do
  [[ -f $dir/nvml.h ]] && { nvml_h=$dir/nvml.h; break; }
done
if [[ -n $nvml_h ]]; then
  # Compiled with the flags of the file that uses the types.
  jobs_list+=("nvml tests/compile_checks/nvml_signatures.cpp src/core/gpu_clock.cpp")
else
  say "nvml: not checked: no nvml.h in $cuda_home (the toolkit's NVML development files are not installed)"
fi

if (( ${#jobs_list[@]} == 0 )); then
  say "skipped: nothing to compile"
  exit "$skip_code"
fi
if [[ -n $only ]]; then
  declare -a kept=()
  for job in "${jobs_list[@]}"; do grep -qE -- "$only" <<< "${job#* }" && kept+=("$job"); done
  jobs_list=("${kept[@]}")
  if (( ${#jobs_list[@]} == 0 )); then
    say "skipped: no file to compile matches --only '$only'"
    exit "$skip_code"
  fi
fi

# compile CONFIG FILE TEMPLATE: the template's compile command, made syntax-only, with the branch on.
compile() {
  local config=$1 file=$2 template=$3 cmd source_arg
  cmd=$(command_for "$root/$template")
  source_arg=$root/$template
  if [[ -z $cmd ]]; then
    # A unity build compiles the file inside a generated unit: that unit's command has the file's flags.
    local unit
    unit=$(grep -lF "\"$root/$template\"" "$build"/CMakeFiles/*/Unity/*.cxx 2> /dev/null | head -1)
    [[ -n $unit ]] && cmd=$(command_for "$unit") && source_arg=$unit
  fi
  if [[ -z $cmd ]]; then
    echo "not in $db (reconfigure the build)"
    return 1
  fi
  local -a args out=()
  eval "args=($cmd)"
  local skip=0 a
  for a in "${args[@]}"; do
    if (( skip )); then skip=0; continue; fi
    case $a in
      -o) skip=1 ;;
      -c | "$source_arg") ;;
      *) out+=("$a") ;;
    esac
  done
  case $config in
    cuda) out+=(-DTRAINBENCH_WITH_CUDA=1) ;;
    nvml) out+=(-DTRAINBENCH_WITH_CUDA=1 -isystem "${nvml_h%/nvml.h}") ;;
    hip) out+=(-DTRAINBENCH_WITH_HIP=1) ;;
  esac
  (cd "$build" && "${out[@]}" -fsyntax-only -Werror -Wno-error=invalid-pch -I"$work/include" -isystem "$cuda_home/include" "$root/$file")
}

start=$(date +%s)
say "${#jobs_list[@]} compiles (${jobs} at a time) against $torch_include and $cuda_home/include"
running=0
i=0
for job in "${jobs_list[@]}"; do
  read -r config file template <<< "$job"
  (
    t0=$(date +%s)
    compile "$config" "$file" "$template" > "$work/$i.log" 2>&1
    echo "$? $(( $(date +%s) - t0 ))" > "$work/$i.rc"
  ) &
  running=$((running + 1))
  i=$((i + 1))
  if (( running >= jobs )); then wait -n; running=$((running - 1)); fi
done
wait

passed=0
failed=0
i=0
for job in "${jobs_list[@]}"; do
  read -r config file template <<< "$job"
  read -r rc secs < "$work/$i.rc" 2> /dev/null || { rc=1; secs=0; }
  if [[ $rc == 0 ]]; then
    passed=$((passed + 1))
    say "ok    $config  $file (${secs}s)"
  else
    failed=$((failed + 1))
    say "FAIL  $config  $file (${secs}s):"
    sed 's/^/    /' "$work/$i.log"
  fi
  i=$((i + 1))
done
say "done in $(( $(date +%s) - start ))s"
echo "cuda-compile-check: $passed passed, $failed failed"
(( failed == 0 ))
