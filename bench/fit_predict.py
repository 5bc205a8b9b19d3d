#!/usr/bin/env python3
"""Fits the prediction method's constants (src/predict/method.cpp, fitted_constants; docs/prediction.md) on
the fit rows of bench/data/published-training.csv, and the memory factor on the H100's own bf16 memory
measurements of CNNs. Never reads a test row's figure.

  python3 bench/fit_predict.py --exe build/debian/trainbench [--cache results/predict-census]

Prints the constants as JSON (to paste into fitted_constants, and for `predict --constants`), writes the
harness factors to bench/data/harness-factors.json, and says how well the fit rows are met.

The fit: the efficiencies (convolution, matrix product, memory), the host's time per kernel and the
kernel floor minimise the mean absolute log error over the fit rows, each harness's rows divided by that
harness's factor (the geometric mean of its fit rows' published / predicted). A coordinate search over
multiplicative steps (x1.4, then x1.12), from a start that says nothing about any card (or --start). The interval is the 90th percentile
of the fit rows' absolute relative error, rounded up to 5%. The autocast memory factor is the median over
the CNNs of examples/h100/seed2019-bf16.json of the card's allocated bytes per sample over the census's
activations in autocast's types (BERT is not among them: its largest batch on the H100 is the test)."""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import predict_common as pc  # noqa: E402

NAMES = ["conv_efficiency", "matmul_efficiency", "conv_tensor_efficiency", "matmul_tensor_efficiency",
         "memory_efficiency", "host_per_kernel_s", "kernel_floor_s"]
BOUNDS = {"conv_efficiency": (0.02, 1.0), "matmul_efficiency": (0.02, 1.0), "conv_tensor_efficiency": (0.02, 1.0),
          "matmul_tensor_efficiency": (0.02, 1.0), "memory_efficiency": (0.05, 1.0),
          "host_per_kernel_s": (0.0, 1e-3), "kernel_floor_s": (0.0, 1e-3)}
MEMORY_CNNS = ["resnet50:b64", "vgg16:b64", "mobilenet_v2:b32", "inception3:b32", "googlenet:b32",
               "densenet121:b32", "resnet101:b32", "resnet18:b32"]


def evaluate(theta, rows, exe, cache, tmp):
    k = dict(theta, version="fit", autocast_memory_factor=1.0, interval=0.0, profile_interval=0.0)
    path = os.path.join(tmp, "constants.json")
    with open(path, "w") as f:
        json.dump(k, f)
    predicted = pc.predict_rows(rows, exe, cache, path)
    factors = pc.harness_factors(rows, predicted)
    errors = {r["id"]: math.log(pc.factor_of(r, factors) * predicted[r["id"]]["throughput"] / r["throughput"])
              for r in rows}
    return sum(abs(e) for e in errors.values()) / len(errors), errors, factors


def memory_factor(exe, cache):
    """Median over the CNNs of the H100's allocated bytes per sample (bf16) over the census's autocast bytes."""
    seed = json.load(open(os.path.join(pc.HERE, "..", "examples", "h100", "seed2019-bf16.json")))
    ratios = []
    for rec in seed["benchmarks"]:
        key = f"{rec['model']}:b{rec['batch_size']}"
        if key not in MEMORY_CNNS or rec["status"] != "ok":
            continue
        row = {"model": rec["model"], "params": {}, "optimizer": rec["optimizer"], "layout": rec["layout"]}
        pc.ensure_censuses([row], exe, cache)
        c = json.load(open(pc.census_path(row, cache)))
        per = (c["forward_live2"] - c["forward_live1"]) / (c["batch2"] - c["batch1"])
        base = c["forward_live1"] - per * c["batch1"]
        typed = fp32 = 0.0
        for a, b in zip(c["ops1"], c["ops2"]):
            out, cast = b["out_elems"] - a["out_elems"], b["cast_elems"] - a["cast_elems"]
            typed += out * (4 if a["out_wide"] else 2) + 4 * cast
            fp32 += 4 * out
        fixed = base + 6 * c["parameters"]  # fp32 parameters' gradients and autocast's 2-byte copies
        measured = (rec["memory"]["peak_bytes"] - fixed) / rec["batch_size"]
        ratios.append(measured / (per * typed / fp32))
        print(f"  memory {key}: {ratios[-1]:.3f}", file=sys.stderr)
    return statistics.median(ratios)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", default="build/trainbench")
    ap.add_argument("--cache", default="results/predict-census")
    ap.add_argument("--start", help="a JSON object of constants to start the search from (an earlier run's)")
    args = ap.parse_args()
    rows = [r for r in pc.read_table() if r["split"] == "fit"]
    pc.ensure_censuses(rows, args.exe, args.cache)
    theta = {"conv_efficiency": 0.5, "matmul_efficiency": 0.5, "conv_tensor_efficiency": 0.5,
             "matmul_tensor_efficiency": 0.5, "memory_efficiency": 0.5,
             "host_per_kernel_s": 10e-6, "kernel_floor_s": 2e-6}
    if args.start:
        start = json.load(open(args.start))
        theta = {k: start[k] for k in NAMES}
    with tempfile.TemporaryDirectory() as tmp:
        best, errors, factors = evaluate(theta, rows, args.exe, args.cache, tmp)
        for step in (1.4, 1.12):
            improved = True
            while improved:
                improved = False
                for name in NAMES:
                    for direction in (step, 1 / step):
                        trial = dict(theta)
                        lo, hi = BOUNDS[name]
                        trial[name] = min(hi, max(lo, theta[name] * direction))
                        if trial[name] == theta[name]:
                            continue
                        score, e, f = evaluate(trial, rows, args.exe, args.cache, tmp)
                        if score < best - 1e-6:
                            theta, best, errors, factors, improved = trial, score, e, f, True
            print(f"step {step}: mean |log error| {best:.4f} {theta}", file=sys.stderr)
    rel = sorted(abs(math.exp(e) - 1) for e in errors.values())
    p90 = rel[min(len(rel) - 1, math.ceil(0.9 * len(rel)) - 1)]
    interval = math.ceil(p90 * 20) / 20
    constants = dict(version="2026-12-07", **theta, autocast_memory_factor=round(memory_factor(args.exe, args.cache), 3),
                     interval=interval, profile_interval=round(interval / 2, 3))
    for r in rows:
        print(f"  fit {r['id']:>4} {r['card']:<15} {r['model']:<12} {r['precision']:<5} b{r['batch']:<5} "
              f"{math.exp(errors[r['id']]) * 100 - 100:+6.1f}%", file=sys.stderr)
    with open(pc.FACTORS, "w") as f:
        json.dump({k: round(v, 4) for k, v in sorted(factors.items())}, f, indent=2)
        f.write("\n")
    print(json.dumps(constants, indent=2))


if __name__ == "__main__":
    main()
