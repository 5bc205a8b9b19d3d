#!/usr/bin/python3
"""Checks `memory`'s CUDA-card prediction from a CPU run (memory.gpu_target) against what `maxbatch
--memory-limit 4G` found on an H100 (examples/h100/, scripts/checks/gpu-check.sh). The limit capped what the
caching allocator may reserve at 4 GiB; the card it stands for also holds what lies outside the
allocator (examples/h100/gpu-fixed-costs.txt), so the CPU run predicts for 4 GiB + that. It also
re-derives the allocator's ratio (reserved at the found batch / the CPU's tensor line there) from each
workload and predicts the other from it alone. Stdlib only.

    bench/gpu_target_h100.py --trainbench build/trainbench [--out DIR]
"""
import argparse
import json
import math
import os
import subprocess
import sys

H100 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "h100")
WORKLOADS = {
    "resnet18": ([], "maxbatch-resnet18-4G.json"),
    "bert": (["--set", "layers=2", "--set", "seq=128"], "maxbatch-bert-4G.json"),
}
FAST = ["--device", "cpu", "--warmup", "1", "--min-steps", "2", "--min-time", "0", "--max-time", "5"]
LIMIT = 4 << 30


def h100_found(name):
    """The largest batch that trained under the limit, and the reserved bytes there."""
    ok = [r for r in json.load(open(os.path.join(H100, name)))["benchmarks"] if r["status"] == "ok"]
    top = max(ok, key=lambda r: r["batch_size"])
    return top["batch_size"], top["memory"]["footprint_peak_bytes"]


def outside_allocator():
    text = open(os.path.join(H100, "gpu-fixed-costs.txt")).read().split()
    return int(text[text.index("outside_allocator") + 1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainbench", required=True)
    ap.add_argument("--out", default="results/gpu_target_h100")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    context = outside_allocator()
    card = LIMIT + context
    rows, lines = [], {}
    for w, (extra, found_file) in WORKLOADS.items():
        out = os.path.join(a.out, f"memory_{w}.json")
        cmd = [a.trainbench, "memory", "--model", w, *extra, "--fits", str(card), "--gpu-context", str(context),
               *FAST, "-o", out]
        with open(os.path.join(a.out, f"memory_{w}.log"), "w") as log:
            if subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT) != 0:
                print(f"{w}: memory failed (see {a.out})", file=sys.stderr)
                return 1
        fitted = [r for r in json.load(open(out))["benchmarks"] if (r.get("memory") or {}).get("gpu_target")]
        m = fitted[-1]["memory"]
        g = m["gpu_target"]["predictions"][0]
        found, reserved = h100_found(found_file)
        lines[w] = (m["fixed_bytes"], m["activations_bytes_per_sample"], found, reserved)
        rows.append((w, g["largest_batch"], g["largest_batch_low"], g["largest_batch_high"], found))
    print(f"card: 4 GiB for the allocator + {context} bytes outside it = {card} bytes")
    print("| workload | predicted (interval) | H100 found | off |")
    print("|---|---:|---:|---:|")
    for w, p, lo, hi, found in rows:
        print(f"| {w} | {p} ({lo} to {hi}) | {found} | {100.0 * (p - found) / found:+.1f}% |")
    # Each workload's own ratio, and the other predicted from it alone.
    ratios = {w: reserved / (fixed + slope * found) for w, (fixed, slope, found, reserved) in lines.items()}
    for w, r in ratios.items():
        print(f"{w}: reserved at batch {lines[w][2]} / CPU tensor line there = {r:.3f}")
    for src, r in ratios.items():
        for w, (fixed, slope, found, _) in lines.items():
            if w == src:
                continue
            b = math.floor((LIMIT / r - fixed) / slope)
            print(f"{w} from {src}'s ratio alone: {b} (found {found}, {100.0 * (b - found) / found:+.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
