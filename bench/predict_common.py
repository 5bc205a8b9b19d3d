"""What bench/fit_predict.py and bench/predict_vs_published.py share: the published-training table, the
censuses of its models (taken once by `trainbench predict --census-out`, cached), and the predictions of
`trainbench predict` for its rows, grouped so that one call predicts every card and batch of a model and
precision. Standard library only."""
import concurrent.futures
import csv
import hashlib
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "data", "published-training.csv")
FACTORS = os.path.join(HERE, "data", "harness-factors.json")


def read_table(path=TABLE):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    for r in rows:
        r["batch"] = int(r["batch"])
        r["throughput"] = float(r["throughput"])
        r["params"] = dict(kv.split("=", 1) for kv in r["params"].split(";") if kv)
        if r["split"] not in ("fit", "test"):
            sys.exit(f"{path}: row {r['id']}: split must be fit or test")
    return rows


def harness_key(row):
    """Each harness and model has its own factor: the same card differs by up to 1.5x across harnesses."""
    return f"{row['harness']}/{row['model']}/" + ";".join(f"{k}={v}" for k, v in sorted(row["params"].items()))


def model_args(row):
    args = ["--model", row["model"], "--optimizer", row["optimizer"], "--layout", row["layout"]]
    for k, v in sorted(row["params"].items()):
        args += ["--set", f"{k}={v}"]
    return args


def census_path(row, cache):
    key = json.dumps([row["model"], sorted(row["params"].items()), row["optimizer"], row["layout"]])
    return os.path.join(cache, hashlib.sha256(key.encode()).hexdigest()[:16] + ".census.json")


def ensure_censuses(rows, exe, cache):
    os.makedirs(cache, exist_ok=True)
    for r in rows:
        path = census_path(r, cache)
        if os.path.exists(path):
            continue
        print(f"census: {r['model']} {r['params']} ({r['optimizer']}, {r['layout']})", file=sys.stderr)
        subprocess.run([exe, "predict", *model_args(r), "--batch", "1", "--on", "t4", "--census-out", path,
                        "--format", "json"], check=True, stdout=subprocess.DEVNULL)


def predict_rows(rows, exe, cache, constants=None):
    """Each row's prediction (the record's throughput and its interval), from one `predict` call per model,
    precision and TF32 setting."""
    groups = {}
    for r in rows:
        groups.setdefault((census_path(r, cache), r["precision"], r["tf32"]), []).append(r)
    out = {}

    def one(item):
        (census, precision, tf32), members = item
        first = members[0]
        cards = sorted({m["card"] for m in members})
        batches = sorted({m["batch"] for m in members})
        cmd = [exe, "predict", *model_args(first), "--census", census, "--precision", precision, "--tf32", tf32,
               "--batch", ",".join(map(str, batches)), "--on", ",".join(cards), "--format", "json"]
        if constants:
            cmd += ["--constants", constants]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        return members, json.loads(done.stdout)["benchmarks"]

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        answers = list(pool.map(one, groups.items()))
    for members, records in answers:
        by = {(rec["prediction"]["device_id"], rec["batch_size"]): rec for rec in records}
        for m in members:
            rec = by[(m["card"], m["batch"])]
            out[m["id"]] = {"throughput": rec["throughput"], "low": rec["prediction"]["throughput_low"],
                            "high": rec["prediction"]["throughput_high"], "record": rec}
    return out


def harness_factors(rows, predicted):
    """Per harness and model: the geometric mean of published / predicted over its fit rows (trainbench's own
    harness is 1 by definition)."""
    logs = {}
    for r in rows:
        if r["split"] == "fit" and r["harness"] != "trainbench":
            logs.setdefault(harness_key(r), []).append(math.log(r["throughput"] / predicted[r["id"]]["throughput"]))
    return {k: math.exp(sum(v) / len(v)) for k, v in logs.items()}


def factor_of(row, factors):
    return 1.0 if row["harness"] == "trainbench" else factors[harness_key(row)]
