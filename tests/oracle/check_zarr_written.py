#!/usr/bin/env python3
"""Python asdf + asdf-zarr read the asdf-zarr arrays asdf-rs wrote, equal to what was written.

Usage:
    ASDF_WRITE_OUT=DIR cargo test -p asdfrs-core --test it asdf_zarr::
    .venv-oracle/bin/python tests/oracle/check_zarr_written.py DIR/asdf-zarr

`asdf-core/tests/it/asdf_zarr.rs` leaves each file it wrote with `Writer::add_zarr_array` as
`NAME.asdf` beside `NAME.zarr.json`, the values it was given (datatype, shape and C-order bytes
in hex, whole and for a few regions in numpy's slice syntax; the form of the sidecars of
tests/data/asdf-zarr). Each file is opened with python asdf 6.0.0 and asdf-zarr 0.0.4 (pinned in
tests/oracle-requirements.txt) with validation on, checksums verified and every warning an
error; each zarr path must be a `zarr.Array` (an ordinary ndarray path a numpy array) whose
datatype, shape and bytes, whole and by region, equal the sidecar's; the file written with
`ZarrCompressor::ZARR_DEFAULT` must carry zarr's own default compressor's configuration. Prints one line per file;
exits 1 on the first failure, 2 when the folder holds no file.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import asdf
import numpy as np
import zarr


def check(path: Path) -> None:
    expect = json.loads(path.with_suffix(".zarr.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with asdf.open(path, validate_checksums=True, lazy_load=False) as af:
            for p, e in expect["arrays"].items():
                node = af.tree
                for part in p.strip("/").split("/"):
                    node = node[int(part)] if isinstance(node, list) else node[part]
                if isinstance(node, zarr.core.Array):
                    if path.stem == "written_blosc-default":
                        # zarr's own default compressor, which python asdf-zarr writes
                        want = zarr.storage.default_compressor.get_config()
                        if node.compressor.get_config() != want:
                            raise AssertionError(
                                f"{p}: compressor {node.compressor.get_config()}, zarr's "
                                f"default {want}")
                    arr = node[...]
                elif isinstance(node, np.ndarray) or hasattr(node, "__array__"):
                    arr = np.asarray(node)
                else:
                    raise AssertionError(f"{p}: read as {type(node).__name__}")
                if arr.dtype != np.dtype(e["dtype"]):
                    raise AssertionError(f"{p}: datatype {arr.dtype.str}, written {e['dtype']}")
                if list(arr.shape) != e["shape"]:
                    raise AssertionError(f"{p}: shape {arr.shape}, written {e['shape']}")
                if np.array(arr, order="C").tobytes().hex() != e["hex"]:
                    raise AssertionError(f"{p}: values differ from those written")
                for r in e["regions"]:
                    got = np.array(eval(f"arr[{r['selection']}]"), order="C")  # noqa: S307 (our own literals)
                    if list(got.shape) != r["shape"] or got.tobytes().hex() != r["hex"]:
                        raise AssertionError(f"{p}[{r['selection']}]: differs from the written region")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(sys.argv[1])
    files = sorted(folder.glob("*.asdf"))
    if not files:
        print(f"no .asdf file in {folder}", file=sys.stderr)
        return 2
    for f in files:
        try:
            check(f)
        except Exception as e:  # noqa: BLE001 (report any failure with its file)
            print(f"FAIL {f.name}: {type(e).__name__}: {e}")
            return 1
        print(f"ok {f.name}")
    print(f"{len(files)} files read equal by python asdf {asdf.__version__} + asdf-zarr")
    return 0


if __name__ == "__main__":
    sys.exit(main())
