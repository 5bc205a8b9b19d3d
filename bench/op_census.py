#!/usr/bin/python3
"""What a trainbench step and the PyTorch eager step of bench/vs_pytorch.py are made of.

Two measurements per workload, both independent of how loaded the machine is:

* the operator census: every ATen operator one training step dispatches (after two untimed steps),
  counted on each side (trainbench: build/trainbench_op_census, a RecordFunction observer; PyTorch:
  torch.autograd.profiler). Equal counts mean both sides run the same kernels on the same shapes, so
  any difference in speed comes from outside the operators;
* the interpreter's share (needs `perf`): the share of the PyTorch loop's CPU samples, between the first
  and the last timed step, that fall in the Python interpreter itself. It bounds what a harness without
  Python can gain on that workload: a C++ loop dispatching the same operators saves at most this share.

Usage: bench/op_census.py [--build build] [--workloads bilstm_b8,...] [--threads N] [--steps N]
Build the C++ side first: cmake --build build --target trainbench_op_census
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vs_pytorch import DEFAULT, TUNED_GLIBC, WORKLOADS  # noqa: E402


def trainbench_census(exe, name):
    model, params, batch, _layout, optimizer = WORKLOADS[name]
    cmd = [exe, model, str(batch), optimizer] + [f"{k}={v}" for k, v in params.items()]
    counts = json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout)
    # The observer also sees autograd's node names, which the profiler reports apart: ATen's alone.
    return {op: n for op, n in counts.items() if op.startswith("aten::")}


def pytorch_cmd(name, threads, steps, census):
    model, params, batch, layout, optimizer = WORKLOADS[name]
    cmd = ["/usr/bin/python3", os.path.join(HERE, "pytorch_loop.py"), "--model", model, "--batch", str(batch),
           "--threads", str(threads), "--warmup", "2", "--steps", str(steps), "--layout", layout,
           "--optimizer", optimizer]
    for k, v in params.items():
        cmd += ["--set", f"{k}={v}"]
    return cmd + (["--census"] if census else [])


def pytorch_census(name):
    out = subprocess.run(pytorch_cmd(name, 1, 1, census=True), check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def interpreter_share(name, threads, steps):
    """Percent of the timed loop's CPU samples in the Python interpreter (its own binary or libpython)."""
    env = dict(os.environ, GLIBC_TUNABLES=TUNED_GLIBC)
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "perf.data")
        out = subprocess.run(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-F", "999", "-o", data, "--"]
                             + pytorch_cmd(name, threads, steps, census=False),
                             check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        start, end = json.loads(out.stdout.strip().splitlines()[-1])["loop_monotonic_s"]
        report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso", "--stdio",
                                 "--time", f"{start:.6f},{end:.6f}"],
                                check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    share = 0.0
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)", line)
        if m and re.match(r"(lib)?python3", m.group(2)):
            share += float(m.group(1))
    return share


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--workloads", default=DEFAULT, help="comma list of: " + ",".join(WORKLOADS))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--steps", type=int, default=5, help="timed steps of the PyTorch loop under perf")
    a = p.parse_args()
    exe = os.path.join(a.build, "trainbench_op_census")
    if not os.access(exe, os.X_OK):
        print(f"op_census: {exe} is missing; build it with: cmake --build {a.build} --target trainbench_op_census",
              file=sys.stderr)
        return 2
    names = a.workloads.split(",")
    for n in names:
        if n not in WORKLOADS:
            print(f"op_census: unknown workload '{n}' (one of {', '.join(WORKLOADS)})", file=sys.stderr)
            return 2
    have_perf = shutil.which("perf") is not None
    print(f"{'workload':<18} {'tb ops':>8} {'py ops':>8}  {'interpreter %':>13}  differing operators (tb/py)")
    for name in names:
        tb, py = trainbench_census(exe, name), pytorch_census(name)
        diff = [f"{op} {tb.get(op, 0)}/{py.get(op, 0)}" for op in sorted(set(tb) | set(py))
                if tb.get(op, 0) != py.get(op, 0)]
        share = f"{interpreter_share(name, a.threads, a.steps):.2f}" if have_perf else "no perf"
        print(f"{name:<18} {sum(tb.values()):>8} {sum(py.values()):>8}  {share:>13}  {', '.join(diff) or 'none'}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
