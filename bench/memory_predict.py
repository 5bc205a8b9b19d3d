#!/usr/bin/python3
"""Predicted vs measured largest batch under a CPU memory limit.

For each model and limit, `trainbench maxbatch --memory-limit L` first measures batches 4 and 8 (or
smaller ones when those run out of memory under L), fits the address-space footprint against the
batch and predicts the largest batch for L (the record of the largest fitted batch carries it:
memory.predictions[0].largest_batch); then it searches around the prediction and finds the true
largest batch (b trains, b+1 runs out of memory). This prints both, the error, and the tries the
search took (the fit's included); target: within 10% (or 1 for small batches) for every pair.

Each try is as cheap as a peak allows: two steps, one warm-up and one measured. Fewer would miss the
peak: the optimizer's state (Adam's moments) is created by the first step's optimizer update, after
that step's backward, so only the second step's forward and backward run with it live.
CPU heavy all the same (every try is a training case at up to the largest batch): resnet50 alone
takes most of an hour on two busy cores. Memory figures do not depend on the machine's load, only
the wall time does: run it under `nice -n 19` beside other work.
Usage: bench/memory_predict.py [--build build] [--models resnet18,bilstm,bert,resnet50] [--limits 2G,4G,8G]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# name -> (trainbench model, --set values, optimizer)
MODELS = {
    "resnet18": ("resnet18", [], "sgd"),
    "resnet50": ("resnet50", [], "sgd"),
    "bilstm": ("bilstm", [], "sgd"),
    "bert": ("bert", ["seq=200"], "adamw"),
}
DEFAULT_MODELS = "resnet18,bilstm,bert,resnet50"  # cheapest first: an interrupted run still has rows

# One warm-up step and one measured step per try: the fewest that reach the training peak (above).
CHEAP = ["--warmup", "1", "--min-steps", "1", "--max-steps", "1", "--min-time", "0", "--max-noise", "100"]


def run(build, model, sets, optimizer, limit, out):
    cmd = [os.path.join(build, "trainbench"), "maxbatch", "--model", model, "--device", "cpu", "--optimizer", optimizer,
           "--memory-limit", limit] + CHEAP + ["-o", out]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=sys.stderr)
    with open(out) as f:
        records = json.load(f)["benchmarks"]
    predicted = None
    found = 0
    for r in records:
        mem = r.get("memory") or {}
        if mem.get("predictions"):
            predicted = mem["predictions"][0]["largest_batch"]
        if r["status"] == "ok":
            found = max(found, r["batch_size"])
    return predicted, found, len(records)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--limits", default="2G,4G,8G")
    a = ap.parse_args()
    print(f"{'model':<10} {'limit':>6} {'predicted':>10} {'measured':>9} {'error':>8} {'tries':>6}  within target")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models.split(","):
            model, sets, optimizer = MODELS[name]
            for limit in a.limits.split(","):
                out = os.path.join(tmp, f"{name}-{limit}.json")
                predicted, found, tries = run(a.build, model, sets, optimizer, limit, out)
                if predicted is None or found == 0:
                    print(f"{name:<10} {limit:>6} {'-':>10} {found:>9} {'-':>8} {tries:>6}  no prediction")
                    bad += 1
                    continue
                err = (predicted - found) / found
                ok = abs(predicted - found) <= max(1, 0.1 * found)
                bad += 0 if ok else 1
                print(f"{name:<10} {limit:>6} {predicted:>10} {found:>9} {100 * err:>7.1f}% {tries:>6}  {'yes' if ok else 'NO'}",
                      flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
