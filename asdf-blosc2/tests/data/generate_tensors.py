"""Writes the packed-tensor fixtures of asdftool's Blosc2 conversion with python-blosc2.

    .venv-oracle/bin/python asdf-blosc2/tests/data/generate_tensors.py [--check]

python-blosc2's `pack_tensor` / `save_tensor` store a numpy array as a plain super-chunk (no
`b2nd` metalayer) and record the array's kind, shape and numpy datatype in the frame's
variable-length metalayer `__pack_tensor__`. For each case NAME this writes tensors/NAME.b2frame
and tensors/NAME.json: the datatype string and shape numpy gives after `unpack_tensor`, and the
array's C-order bytes in hex. `--check` re-reads every committed frame with `unpack_tensor` and
compares it with its JSON (the frames themselves are not rewritten). python-blosc2 4.14.1
(C-Blosc2 3.3.5), pinned in tests/oracle-requirements.txt.
"""
import json
import os
import sys

import blosc2
import numpy as np

assert blosc2.__version__ == "4.14.1", blosc2.__version__
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tensors")


def cases():
    rng = np.random.default_rng(20261128)
    return {
        # an int32 image: a plain frame of typesize 4 converts to uint32 without the metalayer
        "int32_image": (rng.integers(-1000, 1000, size=(12, 10)).astype("<i4"), 160),
        "float32_cube": (rng.standard_normal((3, 5, 7)).astype("<f4"), 128),
        "big_endian_float64": (np.linspace(-2.0, 3.0, 50).astype(">f8"), 96),
        "int16_vector": (np.arange(-300, 300, 7, dtype="<i2"), 64),
        "complex64": ((rng.standard_normal(20) + 1j * rng.standard_normal(20)).astype("<c8"), 64),
    }


def describe(arr):
    return {"dtype": arr.dtype.str, "shape": list(arr.shape), "hex": arr.tobytes().hex()}


def main(argv):
    check = "--check" in argv
    os.makedirs(OUT, exist_ok=True)
    bad = 0
    for name, (arr, chunksize) in cases().items():
        path = os.path.join(OUT, name + ".b2frame")
        if not check:
            # typesize the array's itemsize: CParams' default is 8, and python-blosc2 4.14.1
            # then returns wrong last items when the bytes are not a multiple of 8
            cparams = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5,
                                     typesize=arr.dtype.itemsize, nthreads=1)
            cframe = blosc2.pack_tensor(arr, chunksize=chunksize, cparams=cparams)
            with open(path, "wb") as f:
                f.write(cframe)
        with open(path, "rb") as f:
            back = blosc2.unpack_tensor(f.read())
        got = describe(np.asarray(back))
        if not check:
            assert got == describe(arr), name
            with open(os.path.join(OUT, name + ".json"), "w") as f:
                json.dump(got, f, indent=1)
                f.write("\n")
        else:
            with open(os.path.join(OUT, name + ".json")) as f:
                want = json.load(f)
            if want != got:
                print(f"{name}: python-blosc2 reads {got['dtype']} {got['shape']}, "
                      f"the sidecar says {want['dtype']} {want['shape']}")
                bad += 1
    print(f"{len(cases())} packed tensors, {bad} differing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
