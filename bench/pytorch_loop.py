#!/usr/bin/python3
"""The PyTorch eager training loop that trainbench is compared against: same model, batch, threads,
loss, optimizer and step definition (zero_grad(set_to_none) + forward + loss + backward + optimizer
step), synthetic data made before timing. CNNs are torchvision's; bilstm and bert are bench/py_models.py
(trainbench's shapes and parameter counts, Hugging Face's BertForPreTraining for bert). Prints one JSON
line with the step times."""
import argparse
import json
import os
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_models  # noqa: E402

TORCHVISION_NAME = {"inception3": "inception_v3"}


def optimizer(name, params):
    # trainbench's learning rates (src/workloads/training.cpp).
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.01)
    if name == "momentum":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)
    raise ValueError(f"unknown optimizer {name}")


def cnn(name, batch, layout):
    name = TORCHVISION_NAME.get(name, name)
    kwargs = {"aux_logits": False, "init_weights": False} if name in ("inception_v3", "googlenet") else {}
    model = getattr(torchvision.models, name)(**kwargs)
    size = 299 if name == "inception_v3" else 224
    x = torch.randn(batch, 3, size, size)
    y = torch.randint(0, 1000, (batch,))
    if layout == "nhwc":
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    return model, lambda: torch.nn.functional.cross_entropy(model(x), y)


def sequence_model(name, batch, params):
    kwargs = {k: (v if k in ("attention", "size") else int(v)) for k, v in params.items()}
    build = {"bert": py_models.bert_pretraining, "gpt": py_models.gpt, "bilstm": py_models.bilstm,
             "llama": py_models.llama}[name]
    model = build(**kwargs)
    data = model.synthetic_batch(batch, model.seq)
    return model, lambda: model.loss(*data)


def census(step) -> int:
    """Counts the ATen operators one step dispatches, as bench/op_census.cpp does for trainbench."""
    step()
    step()
    with torch.autograd.profiler.profile() as prof:
        step()
    counts = {}
    for e in prof.function_events:
        if e.name.startswith("aten::"):
            counts[e.name] = counts.get(e.name, 0) + 1
    json.dump(counts, sys.stdout, sort_keys=True)
    print()
    return 0


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw")
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--set", action="append", default=[], help="key=value, as trainbench's --set")
    p.add_argument("--census", action="store_true",
                   help="print the ATen operators of one step (after two untimed ones) instead of timing")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    params = dict(kv.split("=", 1) for kv in a.set)
    if a.model in ("bert", "gpt", "bilstm", "llama"):
        model, loss_of_step = sequence_model(a.model, a.batch, params)
    else:
        model, loss_of_step = cnn(a.model, a.batch, a.layout)
    model.train()
    opt = optimizer(a.optimizer, model.parameters())

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss_of_step().backward()
        opt.step()

    if a.census:
        return census(step)
    for _ in range(a.warmup):
        step()
    samples = []
    # CLOCK_MONOTONIC, as `perf record -k CLOCK_MONOTONIC` stamps its samples: bench/op_census.py
    # attributes the samples between these two instants to the timed loop.
    loop_start = time.clock_gettime(time.CLOCK_MONOTONIC)
    for _ in range(a.steps):
        t0 = time.perf_counter()
        step()
        samples.append(time.perf_counter() - t0)
    loop_end = time.clock_gettime(time.CLOCK_MONOTONIC)
    json.dump({"samples_s": samples, "threads": torch.get_num_threads(), "torch": torch.__version__,
               "loop_monotonic_s": [loop_start, loop_end]}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
