"""python-blosc2 reads the frames asdf-blosc2 wrote, and python-blosc (C-Blosc 1.21) the
Blosc1 chunks it wrote (the oracle check of the write side).

    .venv-oracle/bin/python asdf-blosc2/tests/check_written.py DIR

DIR is the ASDF_WRITE_OUT folder of a test run: DIR/blosc2-frames/NAME.b2nd (written by
`frames_written_here_read_back_and_are_left_for_python`) beside NAME.bin, the C-order bytes
the array must hold. Every frame must open in python-blosc2 and read back those bytes, with
its variable-length metalayers readable. DIR/blosc1-chunks/NAME.blosc1 (written by
`chunks_written_here_read_back_and_are_left_for_python`, tests/it/blosc1_chunks.rs) beside
NAME.bin: `blosc.decompress` must give those bytes. Exit 1 on any failure, and on no frames
or no chunks at all.
"""
import sys
from pathlib import Path

import blosc
import blosc2
import numpy as np

assert blosc2.__version__ == "4.14.1", blosc2.__version__
assert blosc.__version__ == "1.11.4", blosc.__version__


def check_blosc1(folder: Path) -> int:
    """Failures among the Blosc1 chunks of `folder` (1 more when there are none)."""
    chunks = sorted(folder.glob("*.blosc1"))
    failed = 0
    for f in chunks:
        try:
            got = blosc.decompress(f.read_bytes())
            want = f.with_suffix(".bin").read_bytes()
            if got != want:
                raise AssertionError(f"{len(got)} bytes read, {len(want)} expected, differ")
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failed += 1
            print(f"FAIL {f.name}: {type(e).__name__}: {e}")
    print(f"python-blosc read {len(chunks) - failed} of {len(chunks)} chunks written by asdf-blosc2")
    return failed + (0 if chunks else 1)


def main() -> int:
    folder = Path(sys.argv[1]) / "blosc2-frames"
    frames = sorted(folder.glob("*.b2nd"))
    failed = 0
    for f in frames:
        try:
            a = blosc2.open(str(f), mode="r")
            got = np.ascontiguousarray(a[()]).tobytes()
            want = f.with_suffix(".bin").read_bytes()
            dict(a.schunk.vlmeta.getall())
            if got != want:
                raise AssertionError(f"{len(got)} bytes read, {len(want)} expected, differ")
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failed += 1
            print(f"FAIL {f.name}: {type(e).__name__}: {e}")
    print(f"python-blosc2 read {len(frames) - failed} of {len(frames)} frames written by asdf-blosc2")
    failed_blosc1 = check_blosc1(Path(sys.argv[1]) / "blosc1-chunks")
    return 1 if failed or not frames or failed_blosc1 else 0


if __name__ == "__main__":
    sys.exit(main())
