"""Region reads from python: `a[key]` before the array is read, and `a.region(key)`, give
what numpy gives on python asdf's whole array, for files python asdf writes with each of its
codecs (asdf-compression adds zstd, lz4f and blsc) and for views, byte orders and masks."""

from __future__ import annotations

import asdf
import asdf_compression  # noqa: F401  (registers zstd, lz4f, blsc with python asdf)
import numpy as np
import pytest

import asdf_rs

KEYS = [
    (slice(10, 74), slice(100, 164)),
    (slice(None, None, -3), 7),
    (-1, Ellipsis),
    (Ellipsis, slice(5, -5, 4)),
    (slice(1000, None),),
    (np.int64(3), slice(None)),
    (slice(-7, None), slice(None, None, -1)),
]


def _image():
    return np.arange(700 * 900, dtype="<f4").reshape(700, 900)


@pytest.mark.parametrize("label", [None, "zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"])
def test_regions_of_python_written_blocks_equal_numpy_slices(scratch, label):
    path = scratch / "img.asdf"
    data = _image()
    af = asdf.AsdfFile({"sci": data, "be": data[:50, :60].astype(">i4")})
    af.write_to(path, all_array_compression=label)
    with asdf.open(path) as ref:
        want_sci = np.asarray(ref["sci"])
        want_be = np.asarray(ref["be"])
    for key in KEYS:
        with asdf_rs.open(path, memmap=False) as f:
            got = f.tree["sci"][key]
            np.testing.assert_array_equal(got, want_sci[key], err_msg=f"{label} {key}")
            assert got.dtype == want_sci[key].dtype
        with asdf_rs.open(path, memmap=False) as f:
            part = f.tree["be"].region((slice(3, 40, 2), slice(None, None, -5)))
            assert part.dtype == np.dtype(">i4")  # the file's byte order, as python asdf
            np.testing.assert_array_equal(part, want_be[3:40:2, ::-5])


def test_views_strings_and_scalars(scratch):
    path = scratch / "v.asdf"
    base = np.arange(40 * 30, dtype=np.float64).reshape(40, 30)
    names = np.array(["alpha", "beta", "gamma", "delta"] * 5)
    af = asdf.AsdfFile({"base": base, "view": base[5:30:2, ::-3], "names": names})
    af.write_to(path)
    with asdf.open(path) as ref:
        want_view = np.asarray(ref["view"])
        want_names = np.asarray(ref["names"])
    with asdf_rs.open(path) as f:
        np.testing.assert_array_equal(f.tree["view"][2:9, ::2], want_view[2:9, ::2])
        np.testing.assert_array_equal(f.tree["names"][::-4], want_names[::-4])
        one = f.tree["view"][3, 4]
        assert np.ndim(one) == 0 and one == want_view[3, 4]
        np.testing.assert_array_equal(f.tree["view"].region("1:4, -2"), want_view[1:4, -2])


def test_masked_regions(scratch):
    path = scratch / "m.asdf"
    data = np.ma.masked_array(np.arange(60.0).reshape(6, 10), mask=np.arange(60).reshape(6, 10) % 7 == 0)
    asdf.AsdfFile({"m": data}).write_to(path)
    with asdf.open(path) as ref:
        want = ref["m"][1:5, ::3]
    with asdf_rs.open(path) as f:
        got = f.tree["m"][1:5, ::3]
    assert isinstance(got, np.ma.MaskedArray)
    np.testing.assert_array_equal(got.mask, want.mask)
    np.testing.assert_array_equal(got.data, want.data)


def test_bad_keys_are_index_errors_naming_the_axis(scratch):
    path = scratch / "e.asdf"
    asdf.AsdfFile({"a": np.zeros((4, 5))}).write_to(path)
    with asdf_rs.open(path) as f:
        with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 5"):
            f.tree["a"][1, 5]
        with pytest.raises(IndexError, match="3 indices for an array of 2 dimensions"):
            f.tree["a"][1, 2, 3]
        with pytest.raises(ValueError, match="step cannot be zero"):
            f.tree["a"][::0]
        # fancy and boolean keys go to numpy on the whole array
        np.testing.assert_array_equal(f.tree["a"][[0, 2]], np.zeros((2, 5)))
