"""Pictures from python: `asdf_rs.preview(...)` returns the PNG (or SVG) bytes of an array,
and arrays show in Jupyter through `_repr_png_` (issue 30 item 2). The renderer is
asdf-preview, whose limits are checked against astropy in its own tests; here the python
surface: sizes read back from the PNG header, pixels decoded with zlib, options, errors."""

from __future__ import annotations

import struct
import zlib

import pytest

import asdf_rs
from conftest import REPOSITORY

IMAGES = REPOSITORY / "asdf-preview" / "tests" / "data" / "images.asdf"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def png_rows(data: bytes) -> list[bytes]:
    """The RGB rows of an 8-bit RGB or paletted PNG, top first (filters undone, palette
    indices looked up)."""
    width, height = png_size(data)
    depth, colour = data[24], data[25]
    assert depth == 8 and colour in (2, 3), "8-bit RGB or paletted"
    bpp = 3 if colour == 2 else 1
    pos, idat, palette = 8, b"", b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + n]
        elif kind == b"PLTE":
            palette = data[pos + 8 : pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytes(stride)
    for r in range(height):
        f = raw[r * (stride + 1)]
        line = bytearray(raw[r * (stride + 1) + 1 : (r + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = bytes(line)
    if colour == 3:
        assert palette, "a PLTE chunk"
        rows = [b"".join(palette[3 * k : 3 * k + 3] for k in row) for row in rows]
    return rows


def test_preview_of_a_path_is_a_png_of_the_image():
    data = asdf_rs.preview(str(IMAGES), "sources")
    assert isinstance(data, bytes)
    assert png_size(data) == (200, 300)
    rows = png_rows(data)
    levels = {row[i] for row in rows for i in range(0, len(row), 3)}
    assert len(levels) > 100


def test_nans_are_red_where_they_are_with_row_zero_at_the_bottom():
    rows = png_rows(asdf_rs.preview(IMAGES, "/nans"))
    assert len(rows) == 150
    # array rows 10..13 are NaN: image rows 136..139 from the top
    for r in range(10, 14):
        assert rows[149 - r] == b"\xff\x00\x00" * 170
    assert rows[149 - 50][300:303] != b"\xff\x00\x00"


def test_options_of_an_open_file():
    with asdf_rs.open(IMAGES) as f:
        plane2 = asdf_rs.preview(f, "/cube", slice=[2], interval="minmax", stretch="log")
        plane0 = asdf_rs.preview(f, "/cube")
        small = asdf_rs.preview(f, "sources", max_size=100, percent=99.0, cmap="viridis")
        first = asdf_rs.preview(f)
    assert png_size(plane2) == (80, 64)
    assert plane2 != plane0
    assert png_size(small) == (67, 100)
    # the first array of 2 or more dimensions: `constant`, 40 x 50
    assert png_size(first) == (50, 40)


def test_plots_as_svg_and_png():
    svg = asdf_rs.preview(IMAGES, "spectrum", format="svg").decode()
    assert svg.startswith("<svg")
    assert ">/spectrum/value</text>" in svg
    assert ">float64 (Jy)</text>" in svg
    table = asdf_rs.preview(IMAGES, "table", x="wavelength", y="flux", format="svg").decode()
    assert ">flux (float32)</text>" in table
    assert png_size(asdf_rs.preview(IMAGES, "spectrum")) == (640, 400)


def test_repr_png_for_jupyter():
    with asdf_rs.open(IMAGES) as f:
        tree = f.tree
        image = tree["sources"]._repr_png_()
        assert png_size(image) == (200, 300)
        assert png_size(tree["cube"]._repr_png_()) == (80, 64)
        assert png_size(tree["spectrum"]["value"]._repr_png_()) == (640, 400)
        assert tree["names"]._repr_png_() is None


def test_errors():
    with pytest.raises(asdf_rs.AsdfError, match="/names: cannot draw an array of"):
        asdf_rs.preview(IMAGES, "names")
    with pytest.raises(asdf_rs.AsdfError, match="no node at /nothing"):
        asdf_rs.preview(IMAGES, "nothing")
    with pytest.raises(ValueError, match="stretch"):
        asdf_rs.preview(IMAGES, "sources", stretch="cubic")
    with pytest.raises(ValueError, match="cmap"):
        asdf_rs.preview(IMAGES, "sources", cmap="jet")
    with pytest.raises(asdf_rs.AsdfError, match="beyond axis 0 of length 3"):
        asdf_rs.preview(IMAGES, "cube", slice=[7])
