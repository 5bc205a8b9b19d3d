#!/usr/bin/python3
"""Exports a PyTorch model as a TorchScript file that `trainbench run --model FILE.pt` trains from C++.

    /usr/bin/python3 tools/export-model.py torchvision:resnet18 resnet18.pt
    /usr/bin/python3 tools/export-model.py mypkg.models:MyNet mynet.pt --input 3x64x64 --kwargs '{"width": 32}'
    /usr/bin/python3 tools/export-model.py mypkg.lm:TinyLM lm.pt --input tokens:512 --vocab 32000 --method script

SOURCE is `torchvision:NAME` (a torchvision.models constructor, randomly initialised, no download) or
`module:Class` (any importable nn.Module class, constructed with --kwargs). --method trace (the default)
records the operators run on a sample input of --input's shape, batch 2; --method script compiles the
module's code (needed when control flow depends on the data). The module is traced in training mode, so
batch norm and dropout behave as in training: trainbench measures training steps. (A traced model keeps
that behaviour under --forward-only too; a scripted one follows the module's mode.)

Use a PyTorch whose TorchScript format the trainbench build's LibTorch reads: Debian's /usr/bin/python3
(torch 1.13) for the default build. trainbench refuses files from a newer PyTorch, naming both versions.
"""
import argparse
import importlib
import json
import sys

import torch


def build(source, kwargs):
    kind, _, name = source.partition(":")
    if not name:
        sys.exit(f"export-model: '{source}' is not torchvision:NAME or module:Class")
    if kind == "torchvision":
        import torchvision

        ctor = getattr(torchvision.models, name, None)
        if ctor is None:
            sys.exit(f"export-model: torchvision.models has no '{name}'")
        return ctor(**kwargs)
    try:
        module = importlib.import_module(kind)
    except ImportError as e:
        sys.exit(f"export-model: cannot import '{kind}': {e}")
    cls = getattr(module, name, None)
    if cls is None:
        sys.exit(f"export-model: module '{kind}' has no '{name}'")
    return cls(**kwargs)


def sample_input(spec, vocab):
    if spec.startswith("tokens:"):
        return torch.randint(0, vocab, (2, int(spec[len("tokens:"):])))
    return torch.randn([2] + [int(d) for d in spec.split("x")])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="torchvision:NAME or module:Class")
    p.add_argument("output", help="the TorchScript file to write (.pt)")
    p.add_argument("--input", default="3x224x224", help="one sample: CxHxW (float) or tokens:SEQ (default 3x224x224)")
    p.add_argument("--vocab", type=int, default=32000, help="token ids of the sample input are below this")
    p.add_argument("--method", choices=["trace", "script"], default="trace")
    p.add_argument("--kwargs", default="{}", help="constructor arguments as JSON, e.g. '{\"num_classes\": 10}'")
    a = p.parse_args()

    torch.manual_seed(0)
    model = build(a.source, json.loads(a.kwargs)).train()
    x = sample_input(a.input, a.vocab)
    if a.method == "trace":
        scripted = torch.jit.trace(model, x, check_trace=False)
    else:
        scripted = torch.jit.script(model)
    torch.jit.save(scripted, a.output)
    with torch.no_grad():
        out = scripted(x)
    params = sum(t.numel() for t in model.parameters())
    shape = "x".join(str(d) for d in out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
    print(f"{a.output}: {'traced' if a.method == 'trace' else 'scripted'} {a.source}, torch {torch.__version__}, {params:,} parameters, "
          f"output for 2 samples: {shape}")
    if isinstance(out, torch.Tensor) and out.dim() == 2:
        print(f"run it: trainbench run --model {a.output} --input {a.input} --target classes:{out.shape[1]} --batch 32")


if __name__ == "__main__":
    main()
