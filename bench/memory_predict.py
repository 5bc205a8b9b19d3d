#!/usr/bin/python3
"""Predicted vs measured largest batch under a CPU memory limit.

For each model and limit, `trainbench maxbatch --memory-limit L` first measures batches 4 and 8, fits
the address-space footprint against the batch and predicts the largest batch for L (the record at
batch 8 carries it: memory.predictions[0].largest_batch); then it searches around the prediction and
finds the true largest batch (b trains, b+1 runs out of memory). This prints both, the error, and the
tries the search took; target: within 10% (or 1 for small batches) for every pair.

CPU heavy (every try is a training case at up to the largest batch): about an hour on two cores.
Usage: bench/memory_predict.py [--build build] [--models resnet18,resnet50,bilstm,bert] [--limits 2G,4G,8G]
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


def run(build, model, sets, optimizer, limit, out):
    cmd = [os.path.join(build, "trainbench"), "maxbatch", "--model", model, "--device", "cpu", "--optimizer", optimizer,
           "--memory-limit", limit, "--warmup", "1", "--min-steps", "1", "--min-time", "0", "--max-time", "1", "-o", out]
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
    ap.add_argument("--models", default=",".join(MODELS))
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
