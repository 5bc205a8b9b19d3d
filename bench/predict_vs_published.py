#!/usr/bin/env python3
"""How well `trainbench predict` (the spec-sheet path, with the constants the program ships) meets
published training throughputs it was not fitted on: each test row of bench/data/published-training.csv
with its prediction (times its harness's factor, bench/data/harness-factors.json, fitted on that harness's
fit rows only), the published figure and the error; the mean and largest absolute error; how often the
interval covered the published figure; the speed ratios between cards within one harness, model and
precision against the published ones; the H100's largest BERT-Base seq 512 bf16 batch against the one
measured (examples/h100/maxbatch-bert.json); and how long `predict` takes for one model on every card.

  python3 bench/predict_vs_published.py --exe build/debian/trainbench [--cache results/predict-census]
"""
import argparse
import itertools
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import predict_common as pc  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", default="build/trainbench")
    ap.add_argument("--cache", default="results/predict-census")
    args = ap.parse_args()
    rows = pc.read_table()
    factors = json.load(open(pc.FACTORS))
    pc.ensure_censuses(rows, args.exe, args.cache)
    predicted = pc.predict_rows(rows, args.exe, args.cache)

    print("Held-out rows (split = test): prediction x its harness's factor against the published figure")
    print(f"{'id':>4}  {'harness':<10} {'card':<15} {'model':<8} {'precision':<9} {'batch':>5}  "
          f"{'predicted':>9} {'published':>9} {'error':>7}  interval")
    errors, covered = [], 0
    tests = [r for r in rows if r["split"] == "test"]
    for r in tests:
        f = pc.factor_of(r, factors)
        p = predicted[r["id"]]
        value, low, high = f * p["throughput"], f * p["low"], f * p["high"]
        err = value / r["throughput"] - 1
        errors.append(err)
        inside = low <= r["throughput"] <= high
        covered += inside
        precision = r["precision"] + ("+tf32" if r["tf32"] == "on" else "")
        print(f"{r['id']:>4}  {r['harness']:<10} {r['card']:<15} {r['model']:<8} {precision:<9} {r['batch']:>5}  "
              f"{value:9.1f} {r['throughput']:9.1f} {err * 100:+6.1f}%  {low:.0f}-{high:.0f}{'' if inside else '  (missed)'}")
    cards = {r["card"] for r in tests}
    print(f"\n{len(tests)} rows, {len(cards)} cards: mean absolute error {100 * sum(map(abs, errors)) / len(errors):.1f}%, "
          f"largest {100 * max(map(abs, errors)):.1f}%; the interval covered {covered} of {len(tests)} "
          f"({100 * covered / len(tests):.0f}%)")

    # Speed ratios: every pair of cards within one harness, model, precision and batch rule (fit rows too:
    # a ratio's harness factor cancels, so no row's own figure enters its predicted ratio).
    print("\nSpeed ratios between cards within one harness, model and precision (B over A)")
    ratio_errors = []
    groups = {}
    for r in rows:
        if r["harness"] != "trainbench":
            groups.setdefault((r["harness"], pc.harness_key(r), r["precision"], r["tf32"]), []).append(r)
    for (harness, key, precision, tf32), members in sorted(groups.items()):
        for a, b in itertools.combinations(sorted(members, key=lambda m: m["throughput"]), 2):
            published = b["throughput"] / a["throughput"]
            ours = predicted[b["id"]]["throughput"] / predicted[a["id"]]["throughput"]
            ratio_errors.append(ours / published - 1)
            if harness == "lambda-v1" and precision == "fp16" and a["model"] == "resnet50":
                print(f"  {harness} {a['model']} {precision}: {b['card']}/{a['card']} published {published:.2f}, "
                      f"predicted {ours:.2f} ({(ours / published - 1) * 100:+.1f}%)")
    print(f"{len(ratio_errors)} ratios: mean absolute error {100 * sum(map(abs, ratio_errors)) / len(ratio_errors):.1f}%, "
          f"largest {100 * max(map(abs, ratio_errors)):.1f}%")

    # The H100's own rows (fit rows: how closely the fitted method meets its own harness).
    own = [r for r in rows if r["harness"] == "trainbench"]
    own_err = [predicted[r["id"]]["throughput"] / r["throughput"] - 1 for r in own]
    print(f"\ntrainbench on one H100 ({len(own)} fit rows): mean absolute error "
          f"{100 * sum(map(abs, own_err)) / len(own_err):.1f}%, largest {100 * max(map(abs, own_err)):.1f}%")

    # Memory: BERT-Base seq 512 bf16's largest batch on the H100 80GB, measured 196.
    mem = subprocess.run([args.exe, "predict", "-m", "bert", "--set", "seq=512", "-b", "196", "--precision", "bf16",
                          "--on", "h100-sxm", "--format", "json", "--census",
                          pc.census_path({"model": "bert", "params": {"seq": "512"}, "optimizer": "sgd",
                                          "layout": "nchw"}, args.cache)]
                         if os.path.exists(pc.census_path({"model": "bert", "params": {"seq": "512"}, "optimizer": "sgd",
                                                           "layout": "nchw"}, args.cache))
                         else [args.exe, "predict", "-m", "bert", "--set", "seq=512", "-b", "196", "--precision", "bf16",
                               "--on", "h100-sxm", "--format", "json"],
                         check=True, capture_output=True, text=True)
    p = json.loads(mem.stdout)["benchmarks"][0]["prediction"]
    print(f"\nBERT-Base seq 512 bf16 on the H100 80GB: largest batch predicted {p['largest_batch']} "
          f"({p['largest_batch_low']}-{p['largest_batch_high']}), measured 196 "
          f"({(p['largest_batch'] / 196 - 1) * 100:+.1f}%)")

    # Time: one model on every card, from a census (a profile's path has the same cost) and from nothing.
    census = pc.census_path({"model": "resnet50", "params": {}, "optimizer": "momentum", "layout": "nchw"}, args.cache)
    for label, extra in (("from a census", ["--census", census]), ("spec-sheet only, census taken", [])):
        start = time.monotonic()
        subprocess.run([args.exe, "predict", "-m", "resnet50", "--optimizer", "momentum", "-b", "256", "--precision",
                        "fp16", "--on", "all", *extra], check=True, capture_output=True)
        print(f"predict resnet50 on every card, {label}: {time.monotonic() - start:.2f} s")


if __name__ == "__main__":
    main()
