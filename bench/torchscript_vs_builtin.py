#!/usr/bin/python3
"""A traced torchvision resnet18 (tools/export-model.py) against trainbench's built-in resnet18: the
same batch, threads, optimizer, step count and stopping rule, alternating rounds (built-in, traced,
built-in, traced, ...) so drift hits both alike; each side's best median step time counts. Prints both
parameter counts (they must be equal: the same architecture) and images/s.

Usage: bench/torchscript_vs_builtin.py [--build build] [--batch 8] [--threads 0] [--steps 10] [--rounds 2]
       [--warmup N] [--python PY] [--model resnet18.pt]
Without --warmup both sides take trainbench's default warm-up (until the step time settles; a traced
model waits out its executor's profiling first): the figures then show whether the default is fair.
The model is exported into a temporary directory with --python (default /usr/bin/python3), whose torch
must match the build's LibTorch (Debian's 1.13; the venv of `make bench TORCH=pip` for 2.x).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def measure(exe, model_args, a, out):
    warmup = ["--warmup", str(a.warmup)] if a.warmup is not None else []
    cmd = [exe, "run", *model_args, "--batch", str(a.batch), "--threads", str(a.threads), *warmup,
           "--min-steps", str(a.steps), "--max-steps", str(a.steps), "--min-time", "0", "--max-time", "100000",
           "--format", "json", "-o", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with open(out) as f:
        b = json.load(f)["benchmarks"][0]
    if b["status"] != "ok":
        sys.exit(f"{' '.join(cmd)}: {b['status']}: {b['error']}")
    return b


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--warmup", type=int, default=None, help="exactly N warm-up steps (default: trainbench's rule)")
    p.add_argument("--python", default="/usr/bin/python3", help="the Python that exports the model")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--model", help="a traced resnet18 .pt (default: export one)")
    a = p.parse_args()
    exe = os.path.join(a.build, "trainbench")
    with tempfile.TemporaryDirectory() as d:
        model = a.model
        if model is None:
            model = os.path.join(d, "resnet18.pt")
            subprocess.run([a.python, os.path.join(ROOT, "tools", "export-model.py"), "torchvision:resnet18",
                            model], check=True, stdout=subprocess.DEVNULL)
        sides = {
            "built-in resnet18": ["--model", "resnet18"],
            "traced resnet18": ["--model", model, "--input", "3x224x224", "--target", "classes:1000"],
        }
        best = {}
        params = {}
        for r in range(a.rounds):
            for name, args in sides.items():
                b = measure(exe, args, a, os.path.join(d, "r.json"))
                params[name] = b["parameters"]
                step = b["step_time_s"]["median"]
                print(f"round {r + 1}: {name:18s} {a.batch / step:8.2f} images/s (median step {step * 1e3:.1f} ms, "
                      f"n={b['step_time_s']['n']}, threads {b['threads']}, warm-up {b['warmup_steps']} steps, "
                      f"still settling: {b.get('still_settling')})", flush=True)
                best[name] = min(best.get(name, float("inf")), step)
    print()
    for name in sides:
        print(f"{name:18s} {params[name]:>12,} parameters  {a.batch / best[name]:8.2f} images/s (best median)")
    ratio = best["built-in resnet18"] / best["traced resnet18"]
    print(f"traced / built-in throughput: {ratio:.3f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
