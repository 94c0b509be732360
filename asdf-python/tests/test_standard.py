"""`asdf_rs.write(..., standard=...)`: the ASDF Standard version a file is written in.

Files of 1.7.0 (python asdf 6.0.0 writes and reads it only with ``ASDF_UNSTABLE_CORE_SCHEMAS``
set before it is imported) are read back by python asdf in a child process with that
variable, validated on read, and compared with what was written; 1.6.0 files by python asdf
as it is (issue 31 item 5).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import asdf_rs

# Run by python asdf in a child: opens the file validated, loads every array, and prints what
# the test compares (the standard and the values).
READ_IN_PYTHON_ASDF = r"""
import json, sys, warnings
warnings.simplefilter("error")
warnings.filterwarnings("ignore", message=r".*ASDF_UNSTABLE_CORE_SCHEMAS.*")
import asdf, numpy as np
path = sys.argv[1]
with asdf.open(path, validate_checksums=True, lazy_load=False, memmap=False) as af:
    out = {
        "version": str(af.version),
        "image": np.asarray(af.tree["image"]).tolist(),
        "image_dtype": str(np.asarray(af.tree["image"]).dtype),
        "counts": np.asarray(af.tree["counts"]).tolist(),
        "name": af.tree["name"],
    }
print(json.dumps(out))
"""


def python_asdf_reads(path, unstable):
    env = dict(os.environ)
    env.pop("ASDF_UNSTABLE_CORE_SCHEMAS", None)
    if unstable:
        env["ASDF_UNSTABLE_CORE_SCHEMAS"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", READ_IN_PYTHON_ASDF, str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def raw_tree(path):
    data = path.read_bytes()
    return data[: data.index(b"\n...")].decode()


@pytest.mark.parametrize(
    "standard, ndarray_tag, unstable",
    [
        ("1.7.0", "core/ndarray-1.2.0", True),
        ("1.6.0", "core/ndarray-1.1.0", False),
    ],
)
def test_written_standard_reads_in_python_asdf(scratch, standard, ndarray_tag, unstable):
    image = np.arange(20, dtype=">f4").reshape(4, 5) / 3
    counts = np.array([1, -2, 2**40], dtype="<i8")
    path = scratch / f"s{standard}.asdf"
    asdf_rs.write(
        str(path),
        {"image": image, "counts": counts, "name": "frame"},
        standard=standard,
        compression="zlib",
    )

    text = raw_tree(path)
    assert f"#ASDF_STANDARD {standard}" in text
    # the %TAG handle `!` stands for tag:stsci.edu:asdf/
    assert "%TAG ! tag:stsci.edu:asdf/" in text
    assert text.count(f"!{ndarray_tag}\n") == 2, text

    seen = python_asdf_reads(path, unstable)
    assert seen["version"] == standard
    assert seen["image_dtype"] == ">f4" or seen["image_dtype"] == "float32"
    np.testing.assert_array_equal(np.array(seen["image"], dtype="f4"), image)
    assert seen["counts"] == counts.tolist()
    assert seen["name"] == "frame"

    # and our own reader
    with asdf_rs.open(str(path)) as f:
        np.testing.assert_array_equal(f.tree["image"].read(), image)
        np.testing.assert_array_equal(f.tree["counts"].read(), counts)


def test_an_unknown_standard_is_refused_and_writes_nothing(scratch):
    path = scratch / "never.asdf"
    with pytest.raises(Exception, match="1.9.0"):
        asdf_rs.write(str(path), {"a": np.zeros(3)}, standard="1.9.0")
    assert not path.exists()
    with pytest.raises(Exception, match="standard|version"):
        asdf_rs.write(str(path), {"a": np.zeros(3)}, standard="one point seven")
    assert not path.exists()
