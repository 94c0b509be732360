"""The reference side of the preview benchmark (asdf-preview/bench/README.md): what an
astronomer writes today to look at an image. Opens the ASDF file with python asdf, takes
astropy's ZScaleInterval limits, and writes the image as a grey PNG with row 0 at the bottom
(matplotlib's imsave, origin="lower"), NaNs in red as asdftool preview draws them.

    python astropy_png.py IN.asdf OUT.png
"""
import sys

import asdf
import matplotlib
import numpy as np
from astropy.visualization import ZScaleInterval

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

with asdf.open(sys.argv[1], lazy_load=True, memmap=True) as af:
    data = np.asarray(af["sci"])
    vmin, vmax = ZScaleInterval().get_limits(data)
    cmap = matplotlib.colormaps["gray"].with_extremes(bad="red")
    plt.imsave(sys.argv[2], data, vmin=vmin, vmax=vmax, cmap=cmap, origin="lower")
