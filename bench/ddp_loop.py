#!/usr/bin/python3
"""One rank of PyTorch's DistributedDataParallel, started by torchrun: the peer of `trainbench run --dist`
(bench/vs_ddp.py). The same model as bench/pytorch_loop.py (torchvision's CNNs, bench/py_models.py for
bert), batch per rank, threads, loss, optimizer and step (zero_grad(set_to_none) + forward + loss +
backward with DDP's bucketed all-reduce + optimizer step), Gloo, DDP's 25 MiB buckets.

As trainbench's data-parallel step (docs/distributed.md): replicas start equal (DDP broadcasts rank 0's
parameters at construction), each rank draws its own synthetic batch (seed 1000 + rank), buffers are
broadcast once at the start and not every step (broadcast_buffers=False), and after each step, outside
the timed region, the ranks agree on the slowest rank's step time (an all-reduce of the maximum). The
global throughput is world size x batch / the median of those agreed step times, as trainbench's.
Rank 0 prints one JSON line."""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_loop  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw")
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--bucket-mb", type=float, default=25.0)
    p.add_argument("--set", action="append", default=[], help="key=value, as trainbench's --set")
    a = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)  # the same model on every rank; DDP broadcasts rank 0's anyway
    params = dict(kv.split("=", 1) for kv in a.set)
    if a.model in ("bert", "gpt", "bilstm", "llama"):
        model, _ = pytorch_loop.sequence_model(a.model, 1, params)
    else:
        model, _ = pytorch_loop.cnn(a.model, 1, a.layout)
    model.train()
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=a.bucket_mb, broadcast_buffers=False)
    torch.manual_seed(1000 + rank)  # each rank's own data, made after the model
    if a.model in ("bert", "gpt", "bilstm", "llama"):
        data = model.synthetic_batch(a.batch, model.seq)
        # The model's own loss, with its `self(...)` forward going through DDP (so that DDP's hooks run).
        through = _Through(ddp, model)
        loss_of_step = lambda: type(model).loss(through, *data)  # noqa: E731
    else:
        size = 299 if a.model == "inception3" else 224
        x = torch.randn(a.batch, 3, size, size)
        y = torch.randint(0, 1000, (a.batch,))
        if a.layout == "nhwc":
            x = x.contiguous(memory_format=torch.channels_last)
        loss_of_step = lambda: torch.nn.functional.cross_entropy(ddp(x), y)  # noqa: E731
    opt = pytorch_loop.optimizer(a.optimizer, ddp.parameters())

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss_of_step().backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    agreed = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        step()
        t = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        agreed.append(t.item())
    if rank == 0:
        median = statistics.median(agreed)
        json.dump({"step_time_s": agreed, "median_s": median, "global_samples_s": world * a.batch / median,
                   "world_size": world, "threads": torch.get_num_threads(), "torch": torch.__version__}, sys.stdout)
        print()
    # Leave together, without tearing Gloo down: a rank in destroy_process_group while another has
    # already gone was seen to hang (torch 2.11, 2 and 4 ranks on one machine).
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)


class _Through:
    """`self` for the model's loss: calling it runs DDP's forward; any other attribute is the model's."""

    def __init__(self, ddp, model):
        self._ddp, self._model = ddp, model

    def __call__(self, *args, **kwargs):
        return self._ddp(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._model, name)


if __name__ == "__main__":
    sys.exit(main())
