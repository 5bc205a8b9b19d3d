#!/usr/bin/python3
"""trainbench against an equivalent PyTorch eager loop on the same LibTorch (Debian python3-torch).

For each model: runs trainbench and the Python loop alternately (ROUNDS times each, so clock drift
hits both alike), takes each side's best median step time, and prints the ratio
trainbench throughput / PyTorch throughput. Also reports trainbench's harness time: the share of the
case's wall time (child start to record) spent outside the warm-up and timed steps.

Usage: bench/vs_pytorch.py [--build build] [--models resnet50,mobilenet_v2] [--batch 16] [--threads N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TORCHVISION_NAME = {"inception3": "inception_v3"}


def run_trainbench(exe, model, batch, threads, warmup, steps, layout, extra):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = [exe, "run", "--case", f"{model}:b{batch}:fp32:{layout}:t{threads}:cpu", "--warmup", str(warmup),
               "--min-steps", str(steps), "--max-steps", str(steps), "--min-time", "0", "--max-time", "100000",
               "--format", "json", "-o", out] + extra
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        with open(out) as f:
            b = json.load(f)["benchmarks"][0]
    if b["status"] != "ok":
        raise RuntimeError(f"trainbench case failed: {b['error']}")
    return b


def run_pytorch(model, batch, threads, warmup, steps, layout):
    cmd = ["/usr/bin/python3", os.path.join(HERE, "pytorch_loop.py"), "--model", TORCHVISION_NAME.get(model, model),
           "--batch", str(batch), "--threads", str(threads), "--warmup", str(warmup), "--steps", str(steps),
           "--layout", layout]
    res = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--models", default="resnet50,mobilenet_v2")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--layout", default="nchw")
    p.add_argument("--system-allocator", action="store_true", help="run trainbench with glibc malloc untuned")
    a = p.parse_args()
    exe = os.path.join(a.build, "trainbench")
    extra = ["--system-allocator"] if a.system_allocator else []

    print(f"batch {a.batch}, {a.threads} threads, layout {a.layout}, {a.warmup} warm-up + {a.steps} timed steps, "
          f"best of {a.rounds} alternating rounds{', trainbench with system allocator' if extra else ''}")
    print(f"{'model':<14} {'trainbench img/s':>17} {'pytorch img/s':>14} {'ratio':>6} {'harness %':>10}")
    worst_ratio = None
    for model in a.models.split(","):
        tb_medians, py_medians, harness = [], [], []
        for _ in range(a.rounds):
            b = run_trainbench(exe, model, a.batch, a.threads, a.warmup, a.steps, a.layout, extra)
            tb_medians.append(b["step_time_s"]["median"])
            stepped = sum(b["samples_s"]) + b.get("warmup_time_s", 0.0)
            harness.append(100.0 * (b["wall_time_s"] - stepped) / b["wall_time_s"])
            py = run_pytorch(model, a.batch, a.threads, a.warmup, a.steps, a.layout)
            py_medians.append(statistics.median(py["samples_s"]))
        tb = a.batch / min(tb_medians)
        pt = a.batch / min(py_medians)
        ratio = tb / pt
        worst_ratio = ratio if worst_ratio is None else min(worst_ratio, ratio)
        print(f"{model:<14} {tb:>17.2f} {pt:>14.2f} {ratio:>6.3f} {min(harness):>9.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
