#!/usr/bin/python3
"""trainbench's data parallelism against PyTorch's DistributedDataParallel, both started by the same
torchrun on this machine: `trainbench run --dist` against bench/ddp_loop.py, Gloo, the same model
structure, batch per rank, threads per rank, optimizer, 25 MiB buckets and allocator settings (glibc
tunables for Python equal to trainbench's mallopt), alternating rounds. Each side's best median counts;
the ratio is trainbench's global samples/s over DDP's (the goal: at least 0.95).

Usage: bench/vs_ddp.py --build build/pip --python VENV/bin/python [--worlds 2,4] [--workloads resnet50,bert_l4]
                       [--rounds 3] [--warmup 2] [--steps 5]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vs_pytorch import TUNED_GLIBC  # noqa: E402

# name -> (model, --set values, batch per rank, optimizer)
WORKLOADS = {
    "resnet50": ("resnet50", {}, 8, "sgd"),
    "bert_l4": ("bert", {"layers": "4", "seq": "128", "attention": "math"}, 4, "adamw"),
}
LAUNCHER_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                 "TORCHELASTIC_RUN_ID", "GLIBC_TUNABLES")


def clean_env():
    return {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}


def torchrun(python, world):
    return [os.path.join(os.path.dirname(python), "torchrun"), "--standalone", "--nproc-per-node", str(world)]


def run_trainbench(exe, python, workload, world, threads, warmup, steps):
    model, params, batch, optimizer = WORKLOADS[workload]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = torchrun(python, world) + [
            "--no-python", exe, "run", "--model", model, "--batch", str(batch), "--optimizer", optimizer,
            "--threads", str(threads), "--warmup", str(warmup), "--min-steps", str(steps), "--max-steps", str(steps),
            "--min-time", "0", "--max-time", "100000", "--dist", "--no-baseline", "--bucket-mb", "25",
            "--no-store", "--format", "json", "-o", out]
        for k, v in params.items():
            cmd += ["--set", f"{k}={v}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=clean_env(), timeout=900,
                       cwd=d)
        with open(out) as f:
            b = json.load(f)["benchmarks"][0]
    if b["status"] != "ok":
        raise RuntimeError(f"trainbench case {b['name']} failed: {b['error']}")
    return b["throughput"], b["dist"]["comm_share"]


def run_ddp(python, workload, world, threads, warmup, steps):
    model, params, batch, optimizer = WORKLOADS[workload]
    cmd = torchrun(python, world) + [os.path.join(HERE, "ddp_loop.py"), "--model", model, "--batch", str(batch),
                                     "--threads", str(threads), "--warmup", str(warmup), "--steps", str(steps),
                                     "--optimizer", optimizer, "--bucket-mb", "25"]
    for k, v in params.items():
        cmd += ["--set", f"{k}={v}"]
    env = clean_env()
    env["GLIBC_TUNABLES"] = TUNED_GLIBC
    res = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=900)
    line = [x for x in res.stdout.splitlines() if x.startswith("{")][-1]
    return json.loads(line)["global_samples_s"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(HERE, "..", "build", "pip"))
    p.add_argument("--python", required=True, help="the venv's Python (its torchrun and torch match the build)")
    p.add_argument("--workloads", default="resnet50,bert_l4")
    p.add_argument("--worlds", default="2,4")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=5)
    a = p.parse_args()
    exe = os.path.abspath(os.path.join(a.build, "trainbench"))
    cores = os.cpu_count()
    print(f"{cores} cores; threads per rank = max(1, cores / ranks); {a.warmup} warm-up + {a.steps} timed steps; "
          f"best of {a.rounds} alternating rounds; tuned allocator both sides; Gloo; 25 MiB buckets")
    print(f"{'workload':<10} {'ranks':>5} {'batch/rank':>10} {'trainbench':>11} {'DDP':>9} {'ratio':>6} "
          f"{'tb exposed comm':>16}")
    for name in a.workloads.split(","):
        for world in (int(w) for w in a.worlds.split(",")):
            threads = max(1, cores // world)
            tb, ddp, comm = [], [], []
            for _ in range(a.rounds):
                t, c = run_trainbench(exe, a.python, name, world, threads, a.warmup, a.steps)
                tb.append(t)
                comm.append(c)
                ddp.append(run_ddp(a.python, name, world, threads, a.warmup, a.steps))
            unit = "samples/s"
            print(f"{name:<10} {world:>5} {WORKLOADS[name][2]:>10} {max(tb):>11.2f} {max(ddp):>9.2f} "
                  f"{max(tb) / max(ddp):>6.3f} {100 * min(comm):>15.1f}%  ({unit}; rounds tb "
                  f"{', '.join(f'{x:.2f}' for x in tb)}; ddp {', '.join(f'{x:.2f}' for x in ddp)})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
