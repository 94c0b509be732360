"""Writes the benchmark image of asdf-preview/bench/README.md: a 4096 x 4096 float32 sky
(Gaussian noise around 1000 counts, 2,000 stars, a few NaNs) as `sci` of an ASDF file, in one
uncompressed block (python asdf 6.0.0's default), seeded so every run writes the same file.

    python make_image.py OUT.asdf
"""
import sys

import asdf
import numpy as np

rng = np.random.default_rng(20261128)
n = 4096
sky = rng.normal(1000.0, 10.0, (n, n)).astype(np.float32)
yy, xx = np.mgrid[-6:7, -6:7]
for _ in range(2000):
    y, x = rng.integers(8, n - 8, 2)
    flux = rng.uniform(50.0, 5000.0)
    sky[y - 6 : y + 7, x - 6 : x + 7] += (flux * np.exp(-(xx**2 + yy**2) / 4.0)).astype(np.float32)
sky[rng.integers(0, n, 64), rng.integers(0, n, 64)] = np.nan
asdf.AsdfFile({"sci": sky}).write_to(sys.argv[1])
