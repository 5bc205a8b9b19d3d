#!/usr/bin/python3
"""trainbench against an equivalent PyTorch eager loop on the same LibTorch: Debian's python3-torch for a
build against libtorch-dev 1.13, the venv's torch for a build against pip torch 2.x (--python; `make
bench` passes the one that matches the build).

Fair by construction: the same architecture (torchvision's CNNs; for bilstm and bert the models in
bench/py_models.py, built to trainbench's exact shapes and parameter counts), batch, threads, loss,
optimizer and step definition, synthetic data made before timing, and the same allocator behaviour on
both sides. Each workload is measured twice:

* "tuned": trainbench with its default mallopt settings (no mmap, no trim, 64 MiB top pad) and Python
  with the same settings given to glibc through GLIBC_TUNABLES;
* "system": trainbench with --system-allocator and Python with glibc's defaults.

The four runs of a round alternate (trainbench tuned, PyTorch tuned, trainbench system, PyTorch
system), ROUNDS rounds, so drift hits every side alike; each side's best median step time counts. The
ratio is trainbench throughput / PyTorch throughput. The harness column is the share of trainbench's
case wall time (child start to record) spent outside the warm-up and timed steps.

bert, gpt and llama name their attention kernel on both sides: sdpa (scaled_dot_product_attention, 2.x only)
or math; `*_sdpa` workloads are skipped, with a line, on a 1.13 pair.

Usage: bench/vs_pytorch.py [--build build/pip] [--python PY] [--workloads resnet50,bilstm_b8,...] [--threads N]
                           [--rounds R]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (trainbench model, --set values, batch, layout, optimizer)
WORKLOADS = {
    "resnet50": ("resnet50", {}, 16, "nchw", "sgd"),
    "mobilenet_v2": ("mobilenet_v2", {}, 16, "nchw", "sgd"),
    "mobilenet_v2_nhwc": ("mobilenet_v2", {}, 16, "nhwc", "sgd"),
    "bilstm_b8": ("bilstm", {}, 8, "nchw", "sgd"),
    "bilstm_b64": ("bilstm", {}, 64, "nchw", "sgd"),
    "bert_s128_b4": ("bert", {"seq": "128", "attention": "math"}, 4, "nchw", "adamw"),
    "bert_s128_b4_sdpa": ("bert", {"seq": "128", "attention": "sdpa"}, 4, "nchw", "adamw"),
    # CPU-sized GPT-2: 4 blocks of width 768, seq 256.
    "gpt_l4_s256_b4": ("gpt", {"layers": "4", "seq": "256", "attention": "math"}, 4, "nchw", "adamw"),
    "gpt_l4_s256_b4_sdpa": ("gpt", {"layers": "4", "seq": "256", "attention": "sdpa"}, 4, "nchw", "adamw"),
    # A real Llama's shape at 4 of its blocks: SmolLM2-135M (width 576, 9 query heads on 3 key/value heads).
    "llama_l4_s256_b4": ("llama", {"size": "smollm2-135m", "layers": "4", "seq": "256", "attention": "math"}, 4,
                         "nchw", "adamw"),
    "llama_l4_s256_b4_sdpa": ("llama", {"size": "smollm2-135m", "layers": "4", "seq": "256", "attention": "sdpa"},
                              4, "nchw", "adamw"),
}
DEFAULT = "resnet50,mobilenet_v2,mobilenet_v2_nhwc,bilstm_b8,bilstm_b64,bert_s128_b4"

# trainbench's prepare_child_process: mallopt(M_MMAP_MAX, 0), mallopt(M_TRIM_THRESHOLD, -1) (the largest
# size), mallopt(M_TOP_PAD, 64 MiB). The same three settings as glibc tunables for the Python process.
TUNED_GLIBC = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=18446744073709551615:glibc.malloc.top_pad=67108864"


def run_trainbench(exe, workload, threads, warmup, steps, system_allocator):
    model, params, batch, layout, optimizer = WORKLOADS[workload]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = [exe, "run", "--model", model, "--batch", str(batch), "--layout", layout, "--optimizer", optimizer,
               "--threads", str(threads), "--warmup", str(warmup), "--min-steps", str(steps), "--max-steps", str(steps),
               "--min-time", "0", "--max-time", "100000", "--format", "json", "-o", out]
        for k, v in params.items():
            cmd += ["--set", f"{k}={v}"]
        if system_allocator:
            cmd.append("--system-allocator")
        env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        with open(out) as f:
            b = json.load(f)["benchmarks"][0]
    if b["status"] != "ok":
        raise RuntimeError(f"trainbench case {b['name']} failed: {b['error']}")
    return b


def run_pytorch(python, workload, threads, warmup, steps, tuned):
    model, params, batch, layout, optimizer = WORKLOADS[workload]
    cmd = [python, os.path.join(HERE, "pytorch_loop.py"), "--model", model, "--batch", str(batch),
           "--threads", str(threads), "--warmup", str(warmup), "--steps", str(steps), "--layout", layout,
           "--optimizer", optimizer]
    for k, v in params.items():
        cmd += ["--set", f"{k}={v}"]
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    if tuned:
        env["GLIBC_TUNABLES"] = TUNED_GLIBC
    res = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--python", default="/usr/bin/python3", help="the Python whose torch matches the build")
    p.add_argument("--workloads", default=DEFAULT, help="comma list of: " + ",".join(WORKLOADS))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--allocator", choices=["both", "tuned", "system"], default="both",
                   help="which allocator settings to measure (both: tuned and system, alternating)")
    a = p.parse_args()
    exe = os.path.join(a.build, "trainbench")
    names = a.workloads.split(",")
    for n in names:
        if n not in WORKLOADS:
            print(f"vs_pytorch: unknown workload '{n}' (one of {', '.join(WORKLOADS)})", file=sys.stderr)
            return 2
    torch_major = int(subprocess.run([a.python, "-c", "import torch; print(torch.__version__.split('.')[0])"],
                                     check=True, stdout=subprocess.PIPE, text=True).stdout.strip())
    if torch_major < 2:
        for n in [n for n in names if n.endswith("_sdpa")]:
            print(f"vs_pytorch: {n} skipped: sdpa needs torch 2.0 or later", file=sys.stderr)
            names.remove(n)

    print(f"{a.threads} threads, {a.warmup} warm-up + {a.steps} timed steps, best of {a.rounds} alternating rounds; "
          "ratio = trainbench / PyTorch eager throughput")
    print(f"{'workload':<18} {'unit':<12} {'tb tuned':>9} {'py tuned':>9} {'ratio':>6} "
          f"{'tb system':>10} {'py system':>10} {'ratio':>6} {'harness %':>10}")
    for name in names:
        batch = WORKLOADS[name][2]
        med = {("tb", True): [], ("py", True): [], ("tb", False): [], ("py", False): []}
        harness, unit = [], ""
        for _ in range(a.rounds):
            for tuned in {"both": (True, False), "tuned": (True,), "system": (False,)}[a.allocator]:
                b = run_trainbench(exe, name, a.threads, a.warmup, a.steps, system_allocator=not tuned)
                unit = b["unit"]
                med[("tb", tuned)].append(b["step_time_s"]["median"])
                stepped = sum(b["samples_s"]) + b.get("warmup_time_s", 0.0)
                harness.append(100.0 * (b["wall_time_s"] - stepped) / b["wall_time_s"])
                py = run_pytorch(a.python, name, a.threads, a.warmup, a.steps, tuned)
                med[("py", tuned)].append(statistics.median(py["samples_s"]))
        thr = {k: batch / min(v) if v else float("nan") for k, v in med.items()}
        r_t = thr[("tb", True)] / thr[("py", True)]
        r_s = thr[("tb", False)] / thr[("py", False)]
        print(f"{name:<18} {unit:<12} {thr[('tb', True)]:>9.2f} {thr[('py', True)]:>9.2f} {r_t:>6.3f} "
              f"{thr[('tb', False)]:>10.2f} {thr[('py', False)]:>10.2f} {r_s:>6.3f} {min(harness):>9.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
