#!/usr/bin/python3
"""trainbench's image loader against torchvision's ImageFolder + DataLoader on the same folder.

The same work on both sides: every JPEG of the folder read from disk, decoded, RandomResizedCrop(224)
(scale 0.08-1, ratio 3/4-4/3), RandomHorizontalFlip, to float in [0, 1], Normalize(ImageNet mean, std),
batched (batch B, shuffled, drop_last on the Python side); trainbench with W loader threads, PyTorch with
W worker processes (DataLoader's num_workers). Each measurement runs EPOCHS epochs and counts the last
(the files are in the page cache by then; workers started). Rounds alternate trainbench and torchvision
at each worker count, so drift hits both alike; the median of the rounds counts.

Also the decoder's ceiling: a plain libjpeg-turbo loop (bench/decode_ceiling.c) decoding every file at
full size from memory, one thread; PIL's decode loop (Image.open(...).convert("RGB")) likewise; and
trainbench's decode stage (thread time per image, with DCT scaling) from `trainbench data`.

Usage: bench/loader_vs_torchvision.py [--build build] [--data DIR | --images 600] [--batch 64]
       [--workers 1,2] [--rounds 3] [--epochs 2]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def trainbench_images_s(exe, data, batch, workers, epochs):
    out = subprocess.run([exe, "data", "--data", data, "--batch", str(batch), "--loader-threads", str(workers),
                          "--epochs", str(epochs), "--size", "224"], check=True, capture_output=True, text=True).stdout
    rows = [l.split() for l in out.splitlines() if re.match(r"^\s*\d+\s+\d+\s+", l)]
    last = rows[-1]  # the last epoch; with stage times: threads epoch images/s MB/s [scaling] read decode aug copy
    return float(last[2]), float(last[-3])  # images/s, decode ms per image


def torchvision_images_s(data, batch, workers, epochs):
    code = f"""
import time, torch, torchvision.transforms as T
from torchvision.datasets import ImageFolder
from torch.utils.data import DataLoader
tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
ds = ImageFolder({data!r}, transform=tf)
dl = DataLoader(ds, batch_size={batch}, shuffle=True, num_workers={workers}, drop_last=True, persistent_workers=True)
rate = 0.0
for epoch in range({epochs}):
    t0, n = time.perf_counter(), 0
    for x, y in dl:
        n += x.shape[0]
    rate = n / (time.perf_counter() - t0)
print(rate)
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def pil_decode_images_s(files):
    code = """
import sys, time
from PIL import Image
files = sys.argv[1:]
blobs = [open(f, 'rb').read() for f in files]
import io
t0 = time.perf_counter()
for b in blobs:
    Image.open(io.BytesIO(b)).convert('RGB')
print(len(blobs) / (time.perf_counter() - t0))
"""
    out = subprocess.run([sys.executable, "-c", code] + files, check=True, capture_output=True, text=True).stdout
    return float(out.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--data", help="an ImageFolder of JPEGs (default: make one with trainbench make-data)")
    ap.add_argument("--images", type=int, default=600)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2)
    a = ap.parse_args()
    exe = os.path.join(a.build, "trainbench")
    tmp = tempfile.mkdtemp(prefix="trainbench_loader_bench_")
    data = a.data
    if not data:
        data = os.path.join(tmp, "data")
        subprocess.run([exe, "make-data", data, "--images", str(a.images), "--classes", "10"], check=True)
    files = sorted(os.path.join(r, f) for r, _, fs in os.walk(data) for f in fs if f.lower().endswith((".jpg", ".jpeg")))

    workers = [int(w) for w in a.workers.split(",")]
    tb = {w: [] for w in workers}
    tv = {w: [] for w in workers}
    decode_ms = []
    for r in range(a.rounds):
        for w in workers:
            rate, dec = trainbench_images_s(exe, data, a.batch, w, a.epochs)
            tb[w].append(rate)
            decode_ms.append(dec)
            tv[w].append(torchvision_images_s(data, a.batch, w, a.epochs))
            print(f"round {r + 1}: {w} worker(s): trainbench {tb[w][-1]:.0f} images/s, torchvision {tv[w][-1]:.0f}",
                  file=sys.stderr)

    ceiling = os.path.join(tmp, "decode_ceiling")
    subprocess.run(["cc", "-O2", "-o", ceiling, os.path.join(HERE, "decode_ceiling.c"), "-lturbojpeg"], check=True)
    turbo = float(subprocess.run([ceiling, "3"] + files, check=True, capture_output=True, text=True).stdout.split()[1])
    pil = pil_decode_images_s(files)

    print(f"\n{len(files)} JPEGs in {data}, batch {a.batch}, {a.rounds} alternating rounds, median of rounds\n")
    print(f"| workers | trainbench images/s | torchvision images/s | ratio |")
    print(f"| ---: | ---: | ---: | ---: |")
    for w in workers:
        m_tb, m_tv = statistics.median(tb[w]), statistics.median(tv[w])
        print(f"| {w} | {m_tb:.0f} | {m_tv:.0f} | {m_tb / m_tv:.2f}x |")
    if len(workers) > 1:
        s_tb = statistics.median(tb[workers[-1]]) / statistics.median(tb[workers[0]])
        s_tv = statistics.median(tv[workers[-1]]) / statistics.median(tv[workers[0]])
        print(f"\nscaling {workers[0]} -> {workers[-1]}: trainbench {s_tb:.2f}x, torchvision {s_tv:.2f}x")
    print("\ndecode only, one thread, files in memory:")
    print(f"  plain libjpeg-turbo loop, full size:        {turbo:.0f} images/s")
    print(f"  PIL Image.open().convert('RGB'), full size: {pil:.0f} images/s")
    print(f"  trainbench decode stage (DCT-scaled):       {1e3 / statistics.median(decode_ms):.0f} images/s "
          f"({statistics.median(decode_ms):.2f} ms per image)")


if __name__ == "__main__":
    main()
