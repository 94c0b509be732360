"""python-blosc2 reads the frames asdf-blosc2 wrote (the oracle check of the write side).

    .venv-oracle/bin/python asdf-blosc2/tests/check_written.py DIR

DIR is the ASDF_WRITE_OUT folder of a test run: DIR/blosc2-frames/NAME.b2nd (written by
`frames_written_here_read_back_and_are_left_for_python`) beside NAME.bin, the C-order bytes
the array must hold. Every frame must open in python-blosc2 and read back those bytes, with
its variable-length metalayers readable. Exit 1 on any failure, and on no frames at all.
"""
import sys
from pathlib import Path

import blosc2
import numpy as np

assert blosc2.__version__ == "4.14.1", blosc2.__version__


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
    return 1 if failed or not frames else 0


if __name__ == "__main__":
    sys.exit(main())
