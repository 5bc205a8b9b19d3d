#!/usr/bin/env python3
"""Writes the pixel fixtures of tests/data/test_pixels.cpp into tests/data/pixels: three JPEGs of odd sizes
and, for given crop boxes and flips, the pixels torchvision's training transform makes of them, so the
tests and CI need no Python. Run with a Python that has numpy, Pillow and torchvision (the pip build's
venv has them after `make bench TORCH=pip`):

    ~/.cache/trainbench/torch-2.11.0/bin/python scripts/make-pixel-fixtures.py [OUT_DIR]

  photo_<w>x<h>.jpg  value noise at three scales with grain, as `trainbench make-data` draws (quality 90,
                     4:2:0): smooth regions, edges and per-pixel detail
  cases.json         one entry per case: file, box [left, top, width, height] in the full image,
                     flip, output [width, height], offset of its pixels in expected.u8
  expected.u8        the pixels, uint8, (height, width, RGB) per case, one case after the other

The expected pixels are torchvision's RandomResizedCrop step for that box, as its __call__ runs it:
F.resized_crop(img, top, left, height, width, size, BILINEAR, antialias=True) on the PIL image that
ImageFolder's loader opens (the whole JPEG decoded, no DCT scaling), then F.hflip when flipped. ToTensor
and Normalize are affine maps of these bytes. The boxes are chosen so that trainbench's DCT-scaled decode
(the smallest scale under which the box still covers twice the output, data/decode_crop.h) applies at
1/8, 1/4, 3/8, 1/2, 5/8, 3/4 and 7/8, and not at all (the output larger than half the box).
"""
import json
import os
import sys

import numpy as np
from PIL import Image
import torchvision.transforms.functional as F
from torchvision.transforms import InterpolationMode


def value_noise(rng, w, h, cell):
    """Random values on a grid of `cell` pixels, bilinearly interpolated (smooth)."""
    gw, gh = w // cell + 2, h // cell + 2
    grid = rng.random((gh, gw, 3))
    ys = np.arange(h) / cell
    xs = np.arange(w) / cell
    y0 = ys.astype(int)
    x0 = xs.astype(int)
    fy = (ys - y0)[:, None, None]
    fx = (xs - x0)[None, :, None]
    a = grid[y0][:, x0]
    b = grid[y0][:, x0 + 1]
    c = grid[y0 + 1][:, x0]
    d = grid[y0 + 1][:, x0 + 1]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def photo(seed, w, h):
    rng = np.random.default_rng(seed)
    img = 0.5 * value_noise(rng, w, h, 61) + 0.3 * value_noise(rng, w, h, 13) + 0.15 * value_noise(rng, w, h, 3)
    img += 0.05 * rng.random((h, w, 3))
    return Image.fromarray(np.clip(img * 255.0, 0, 255).astype(np.uint8), "RGB")


# (width, height, seed) and per image (left, top, box width, box height, flip, out width, out height).
IMAGES = [
    ((339, 251, 1), [(0, 0, 339, 251, False, 19, 15),     # whole image at 1/8
                     (17, 9, 153, 105, True, 55, 38),     # 3/4 at odd sizes
                     (120, 40, 97, 131, False, 24, 32),   # 1/2
                     (3, 101, 150, 150, True, 28, 28),    # 3/8
                     (250, 200, 89, 51, False, 27, 15),   # 5/8 at the far corner
                     (33, 44, 40, 30, True, 61, 47),      # enlarged: no DCT scaling
                     (0, 0, 339, 251, True, 37, 29),      # whole image at 1/4
                     (17, 9, 77, 53, False, 55, 38)]),    # shrunk by 1.4, too little for a DCT scale
    ((517, 389, 2), [(5, 7, 121, 95, False, 29, 23),      # 1/2 at odd sizes
                     (400, 300, 117, 89, True, 14, 11),   # 1/4 at the far corner
                     (128, 64, 256, 256, False, 48, 48),  # 3/8
                     (261, 1, 95, 151, True, 29, 46),     # 5/8, box touching the top edge
                     (300, 100, 128, 128, False, 56, 56),  # 7/8
                     (0, 0, 517, 389, True, 32, 24),      # whole image at 1/8
                     (128, 64, 256, 256, True, 96, 96)]),  # 3/4
    ((97, 61, 3), [(0, 0, 97, 61, False, 131, 87),        # enlarged whole image
                   (11, 7, 73, 49, True, 18, 12),         # 1/2
                   (40, 20, 33, 29, False, 33, 29)]),     # the box's own size
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data", "pixels")
    os.makedirs(out, exist_ok=True)
    cases, blob = [], bytearray()
    for (w, h, seed), boxes in IMAGES:
        name = f"photo_{w}x{h}.jpg"
        photo(seed, w, h).save(os.path.join(out, name), quality=90, subsampling=2)
        img = Image.open(os.path.join(out, name)).convert("RGB")  # as ImageFolder's pil_loader
        for left, top, bw, bh, flip, ow, oh in boxes:
            assert left + bw <= w and top + bh <= h
            px = F.resized_crop(img, top, left, bh, bw, [oh, ow], InterpolationMode.BILINEAR, antialias=True)
            if flip:
                px = F.hflip(px)
            a = np.asarray(px, dtype=np.uint8)
            assert a.shape == (oh, ow, 3)
            cases.append({"file": name, "box": [left, top, bw, bh], "flip": flip, "out": [ow, oh],
                          "offset": len(blob)})
            blob += a.tobytes()
    with open(os.path.join(out, "expected.u8"), "wb") as f:
        f.write(blob)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"transform": "torchvision RandomResizedCrop (PIL bilinear, antialias) + hflip",
                   "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"{len(cases)} cases, {len(blob)} bytes of pixels in {out}")


if __name__ == "__main__":
    main()
