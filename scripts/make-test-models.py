#!/usr/bin/python3
"""Writes the TorchScript fixtures of tests/workloads/test_torchscript.cpp into tests/data (a few KB each), so the
tests and CI need no Python. Run with the Python whose torch matches the LibTorch of the build (Debian's
/usr/bin/python3 with torch 1.13):

    /usr/bin/python3 scripts/make-test-models.py [OUT_DIR]

  tiny_conv.pt      traced conv net, input 3x8x8, 5 classes: conv 3->4 k3 + batch norm + ReLU + global
                    average pool + linear 4->5 (145 parameters)
  tiny_lm.pt        scripted token LM, input tokens:6, vocabulary 16: embedding 16x8, linear 8->8, tanh,
                    linear 8->16 (344 parameters); output [batch, 6, 16]
  tiny_noparams.pt  scripted module without parameters (x * 2)
  tiny_future.pt    tiny_conv.pt with its archive's `version` record set to 11: the file format version a
                    PyTorch newer than 1.13 would write (1.13 reads up to 10)
  Hostile models (tests/runner/test_hostile_input.cpp): each needs input 3x8x8 and fits target classes:5.
  tiny_hang.pt      a forward that never returns (a loop on an integer whose end is centuries away)
  tiny_hog.pt       a forward that fills 4 GiB per sample (a [batch, 2^30] fp32 tensor of ones)
  tiny_boom.pt      a forward that raises RuntimeError("boom from forward")
  tiny_boom_lines.pt  a forward that raises a message of three lines: "boom from forward", then
                    "ValueError: second line" and an indented third, which no reader may take for it
  tiny_crafted.pt   a valid archive whose parameter `w` claims 2^40 elements over a 37-element (148-byte)
                    storage: its data.pkl's size tuple rewritten; the forward sums all of `w`, reading
                    far past the storage (a segmentation fault where it runs)

The parameter counts are restated from these shapes in tests/workloads/test_torchscript.cpp.
"""
import io
import os
import sys
import zipfile

import torch
import torch.nn as nn


class TinyConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = x.mean(dim=(2, 3))
        return self.fc(x)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.hidden = nn.Linear(8, 8)
        self.head = nn.Linear(8, 16)

    def forward(self, tokens):
        return self.head(torch.tanh(self.hidden(self.embed(tokens))))


class NoParams(nn.Module):
    def forward(self, x):
        return x * 2


class Hang(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 5)

    def forward(self, x):
        # k would wrap past 2^63 after 2^62 turns, centuries away; the output uses it, so no optimiser
        # may drop the loop as dead code.
        k = 0
        while k >= 0:
            k = k + x.size(0)
        return self.fc(x.mean(dim=(2, 3))) + k


class Hog(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 5)

    def forward(self, x):
        big = torch.ones(x.size(0), 1 << 30)
        return self.fc(x.mean(dim=(2, 3))) + big[:, :5]


class Boom(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 5)

    def forward(self, x):
        if bool(x.size(0) > 0):
            raise RuntimeError("boom from forward")
        return self.fc(x.mean(dim=(2, 3)))


class BoomLines(Boom):
    def forward(self, x):
        if bool(x.size(0) > 0):
            raise RuntimeError("boom from forward\nValueError: second line\n    third line")
        return self.fc(x.mean(dim=(2, 3)))


class Crafted(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(37))

    def forward(self, x):
        return x.mean(dim=(2, 3)).repeat(1, 2)[:, :5] * self.w.sum()


def rewrite_pickle(src, dst, old, new):
    """Copies the zip archive `src` to `dst` with the one occurrence of `old` in its data.pkl replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("/data.pkl") and item.filename.count("/") == 1:
                assert data.count(old) == 1, data
                data = data.replace(old, new)
            zout.writestr(item, data)


def with_version(src, dst, version):
    """Copies the zip archive `src` to `dst` with its `<archive>/version` record replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("/version") and item.filename.count("/") == 1:
                data = f"{version}\n".encode()
            zout.writestr(item, data)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data")
    torch.manual_seed(0)
    conv = TinyConv().train()  # traced in training mode: batch norm's batch statistics are in the graph
    traced = torch.jit.trace(conv, torch.randn(2, 3, 8, 8))
    torch.jit.save(traced, os.path.join(out, "tiny_conv.pt"))
    torch.jit.save(torch.jit.script(TinyLM()), os.path.join(out, "tiny_lm.pt"))
    torch.jit.save(torch.jit.script(NoParams()), os.path.join(out, "tiny_noparams.pt"))
    with_version(os.path.join(out, "tiny_conv.pt"), os.path.join(out, "tiny_future.pt"), 11)
    torch.jit.save(torch.jit.script(Hang()), os.path.join(out, "tiny_hang.pt"))
    torch.jit.save(torch.jit.script(Hog()), os.path.join(out, "tiny_hog.pt"))
    torch.jit.save(torch.jit.script(Boom()), os.path.join(out, "tiny_boom.pt"))
    torch.jit.save(torch.jit.script(BoomLines()), os.path.join(out, "tiny_boom_lines.pt"))
    honest = os.path.join(out, "tiny_crafted_source.pt")
    torch.jit.save(torch.jit.script(Crafted()), honest)
    # The size tuple (37,) pickles as "(K%t" (BININT1 37); the storage's own element count, also 37,
    # follows the location string instead. LONG1 with 8 bytes, little-endian: 2^40.
    rewrite_pickle(honest, os.path.join(out, "tiny_crafted.pt"), b"(K%t", b"(\x8a\x08" + (1 << 40).to_bytes(8, "little") + b"t")
    os.remove(honest)
    for name in ("tiny_conv", "tiny_lm", "tiny_noparams", "tiny_future", "tiny_hang", "tiny_hog", "tiny_boom",
                 "tiny_boom_lines", "tiny_crafted"):
        print(name, os.path.getsize(os.path.join(out, name + ".pt")), "bytes")


if __name__ == "__main__":
    main()
