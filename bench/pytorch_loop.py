#!/usr/bin/python3
"""The PyTorch eager training loop that trainbench is compared against: same model, batch, threads,
loss, optimizer and step definition (zero_grad(set_to_none) + forward + cross-entropy + backward + SGD
step), synthetic data made before timing. Prints one JSON line with the step times."""
import argparse
import json
import sys
import time

import torch
import torchvision


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    kwargs = {"aux_logits": False, "init_weights": False} if a.model in ("inception_v3", "googlenet") else {}
    model = getattr(torchvision.models, a.model)(**kwargs)
    size = 299 if a.model == "inception_v3" else 224
    x = torch.randn(a.batch, 3, size, size)
    y = torch.randint(0, 1000, (a.batch,))
    if a.layout == "nhwc":
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    samples = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        step()
        samples.append(time.perf_counter() - t0)
    json.dump({"samples_s": samples, "threads": torch.get_num_threads(), "torch": torch.__version__}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
