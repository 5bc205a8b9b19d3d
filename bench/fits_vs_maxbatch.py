#!/usr/bin/python3
"""Checks `memory --fits` (no limit) against `maxbatch --memory-limit` of the same size, per workload and
size, on this machine's CPU: the table of docs/memory.md ("Every held size"). Each `memory` run fits
its line (refined near each size this machine holds), predicts every size, and tries each held size
under itself as a memory limit to within 10% (its default; the line's own figure is shown beside it);
each `maxbatch` finds the largest batch that trains under the limit by measuring (a search a failed
try cut short shows "None"). Both run on their default heap (glibc's, `--allocator system`) and the
build given; the results files' contexts name both. Stdlib only.

    bench/fits_vs_maxbatch.py --trainbench build/trainbench [--sizes 2G,4G,8G] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import time

WORKLOADS = {
    "resnet18": [],
    "resnet50": [],
    "bilstm": [],
    "bert": ["--set", "layers=2", "--set", "seq=128"],
    "gpt": ["--set", "layers=4", "--set", "seq=256"],
}
FAST = ["--device", "cpu", "--warmup", "1", "--min-steps", "2", "--min-time", "0", "--max-time", "5"]


def finished(path):
    """A maxbatch results file whose search ended: none of its tries was cut short (an interrupted search
    leaves its last try as an error)."""
    if not os.path.exists(path):
        return False
    return all(r["status"] != "error" for r in json.load(open(path))["benchmarks"])


def run(cmd, log):
    t0 = time.time()
    with open(log, "w") as f:
        code = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    return code, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainbench", required=True)
    ap.add_argument("--sizes", default="2G,4G,8G")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--out", default="results/fits_vs_maxbatch")
    ap.add_argument("--keep-maxbatch", action="store_true",
                    help="reuse a maxbatch results file already in --out (what maxbatch finds is measured, "
                         "whatever predicted it)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    sizes = a.sizes.split(",")
    rows = []
    for w in a.workloads.split(","):
        extra = WORKLOADS[w]
        mem = os.path.join(a.out, f"memory_{w}.json")
        code, secs = run([a.trainbench, "memory", "--model", w, *extra, "--fits", a.sizes, *FAST, "-o", mem],
                         os.path.join(a.out, f"memory_{w}.log"))
        predicted, line = {}, {}
        if code == 0:
            for r in json.load(open(mem))["benchmarks"]:
                for p in (r.get("memory") or {}).get("predictions") or []:
                    predicted[p["size_bytes"]] = p["largest_batch"]
                    line[p["size_bytes"]] = p.get("line_batch") or p["largest_batch"]
        print(f"{w}: memory exit {code} in {secs:.0f} s", file=sys.stderr, flush=True)
        for s in sizes:
            out = os.path.join(a.out, f"maxbatch_{w}_{s}.json")
            if a.keep_maxbatch and finished(out):
                code, secs = 0, 0.0
            else:
                code, secs = run([a.trainbench, "maxbatch", "--model", w, *extra, "--memory-limit", s, *FAST, "-o", out],
                                 os.path.join(a.out, f"maxbatch_{w}_{s}.log"))
            found = None
            # A search cut short by a failed try (an error, not out of memory) found nothing: its
            # largest batch that trained is not the answer.
            if os.path.exists(out) and finished(out):
                ok = [r["batch_size"] for r in json.load(open(out))["benchmarks"] if r["status"] == "ok"]
                found = max(ok) if ok else None
            size_bytes = int(s[:-1]) << {"M": 20, "G": 30}[s[-1]]
            pred = predicted.get(size_bytes)
            off = f"{100.0 * (pred - found) / found:+.0f}%" if pred and found else "-"
            rows.append((w, s, pred, line.get(size_bytes), found, off))
            print(f"{w} {s}: predicted {pred} (line {line.get(size_bytes)}), maxbatch {found} ({off}), "
                  f"maxbatch {secs:.0f} s", file=sys.stderr, flush=True)
    print("| workload | size | `memory --fits` answer | its line alone | `maxbatch` found | off |")
    print("|---|---|---:|---:|---:|---:|")
    for w, s, pred, ln, found, off in rows:
        print(f"| {w} {' '.join(WORKLOADS[w][1::2])} | {s} | {pred} | {ln} | {found} | {off} |")


if __name__ == "__main__":
    main()
