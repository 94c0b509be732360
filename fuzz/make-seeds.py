#!/usr/bin/env python3
"""Writes the committed fuzz seeds (fuzz/seeds/TARGET/) from the repository's test data.

    python3 fuzz/make-seeds.py          # standard library only

- open_read, typed_validate: the fixtures and layouts of at most 8 KiB (whole files).
- yaml_parse: the tree text (from `%YAML` or `---` to the end marker) of the same files.
- codecs: every compressed block of the codec fixtures of at most 20 KiB stored, as the
  codecs target reads its input: one byte naming the codec (its index in
  Compression::ALL: zlib bzp2 lz4 zstd lz4f blsc), three bytes of decoded size (big-endian),
  the stored bytes.
- blosc2: the Blosc2 fixtures (asdf-blosc2/tests/data/frames, and vlblocks, c-blosc2 and
  plugins: variable-length blocks and plugin codecs) of at most 16 KiB, as the
  blosc2 target reads its input: a 0 byte and the frame, and a 1 byte and the frame from its
  first chunk on (a chunk followed by the rest of the frame).
- hdf5: the h5py files of asdf-hdf5 (asdf-hdf5/tests/data) and the files of other writers
  there (other_writers/: netCDF-C, hdf5plugin's LZ4, old and new layouts) of at most 64 KiB,
  whole.
- fits: the ASDF-in-FITS fixtures (tests/data/asdf-in-fits) of at most 64 KiB, whole.
- region: the `.asdf` files of tests/data's fixtures, libasdf, python-asdf and
  reference-files folders (each sorted; files within a folder at any depth) of at most
  32 KiB that hold an `ndarray`, as the region target reads its input: a byte giving the
  length of a selection text, the text (the 11 of REGION_SELECTIONS in turn), the file.
- manifest: a link to open_read's seeds (the target reads whole files too).
- legacy_blocks: the ASDF 0.1.0 files (tests/data/legacy-0.1.0) of at most 8 KiB, whole, and
  hand-made 0.1.0 files with a 36-byte draft block whose data starts with an encoding chain
  (zlib; tile and zlib; tile, quantize and zlib; an unknown encoding).
"""
import hashlib
import shutil
import struct
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import testdata  # noqa: E402

SEEDS = ROOT / "fuzz" / "seeds"
CODECS = [b"zlib", b"bzp2", b"lz4\0", b"zstd", b"lz4f", b"blsc"]
REGION_SELECTIONS = ["", ":", "::-1", "1:3, ::-2", "-1", "..., 0", "0, ...", "1:, ..., ::2",
                     "::3, 1", "-2:, -1", "2:0:-1"]


def put(target, data):
    d = SEEDS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def blocks(data):
    """(label, stored, data_size) of each block found after the tree."""
    end = data.find(b"\n...\n")
    pos = data.find(b"\xd3BLK", end if end >= 0 else 0)
    while pos >= 0 and pos + 54 <= len(data):
        hsize = struct.unpack(">H", data[pos + 4:pos + 6])[0]
        label = data[pos + 10:pos + 14]
        used, size = struct.unpack(">QQ", data[pos + 22:pos + 38])
        start = pos + 6 + hsize
        alloc = struct.unpack(">Q", data[pos + 14:pos + 22])[0]
        yield label, data[start:start + used], size
        pos = data.find(b"\xd3BLK", start + alloc)


def legacy_file(datatype, shape, chain, payload, memory):
    """A #ASDF 0.1.0 file with one 36-byte draft block, ENCODED: the chain, then payload."""
    tree = ("#ASDF 0.1.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/0.1.0/\n--- !core/asdf\n"
            f"data: !core/ndarray\n  source: 0\n  dtype: {datatype}\n  byteorder: little\n"
            f"  shape: {shape}\n...\n").encode()
    data = f"--- {chain}\n...\n".encode() + payload
    header = struct.pack(">4sHIQQQQ", b"\xd3BLK", 36, 2, len(data), len(data), memory, 0)
    return tree + header + data


def quantize_chunk(bits, offset, scale, values):
    packed = 0
    for v in values:
        packed = (packed << bits) | (v & ((1 << bits) - 1))
    nbytes = (bits * len(values) + 7) // 8
    packed <<= nbytes * 8 - bits * len(values)
    return struct.pack(">BddQ", bits, offset, scale, len(values)) + packed.to_bytes(nbytes, "big")


def legacy_chains():
    ints = struct.pack("<16h", *range(16))
    yield legacy_file("int16", "[16]", "[zlib]", zlib.compress(ints), 32)
    # a 3x5 int16 array in 2x2 tiles: tile grid 2x3, edge tiles padded with 0
    tiled = []
    for tr in range(2):
        for tc in range(3):
            for r in range(tr * 2, tr * 2 + 2):
                for c in range(tc * 2, tc * 2 + 2):
                    tiled.append(r * 5 + c if r < 3 and c < 5 else 0)
    yield legacy_file("int16", "[3, 5]",
                      "[[tile, {shape: [2, 2], original_shape: [3, 5], item_size: 2}], zlib]",
                      zlib.compress(struct.pack(f"<{len(tiled)}h", *tiled)), 30)
    chunk = quantize_chunk(5, 1.5, 0.25, [t - 12 for t in tiled])
    yield legacy_file("float32", "[3, 5]",
                      "[[tile, {shape: [2, 2], original_shape: [3, 5], item_size: 4}], "
                      f"[quantize, {{dtype: 32, original_shape: [{len(tiled)}]}}], zlib]",
                      zlib.compress(chunk), 60)
    yield legacy_file("float64", "[4]", "[[quantize, {dtype: 64, original_shape: [4]}]]",
                      quantize_chunk(12, 0.0, 2.0, [-2048, 2047, 0, 1]), 32)
    yield legacy_file("uint8", "[4]", "[lzma]", b"ABCD", 4)


def main():
    shutil.rmtree(SEEDS, ignore_errors=True)
    files = []
    for name in (testdata.FIXTURES, testdata.LAYOUTS):
        folder = testdata.require_dir(name)
        files += sorted(folder.glob("*.asdf"))
    for f in files:
        data = f.read_bytes()
        if len(data) <= 8192:
            put("open_read", data)
            put("typed_validate", data)
            start = min((i for i in (data.find(b"%YAML"), data.find(b"---")) if i >= 0), default=-1)
            end = data.find(b"\n...\n")
            if start >= 0 and end > start:
                put("yaml_parse", data[start:end + 5])
        for label, stored, size in blocks(data):
            if label in CODECS and len(stored) <= 20480 and size < 1 << 24:
                put("codecs", bytes([CODECS.index(label)]) + size.to_bytes(3, "big") + stored)
    b2data = ROOT / "asdf-blosc2" / "tests" / "data"
    for f in sorted(p for d in ("frames", "vlblocks", "c-blosc2", "plugins")
                    for p in (b2data / d).glob("*.b2*")):
        if not f.is_file():
            continue
        data = f.read_bytes()
        if len(data) <= 16384:
            put("blosc2", b"\0" + data)
            header_len = struct.unpack(">i", data[11:15])[0]
            put("blosc2", b"\1" + data[header_len:])
    legacy = testdata.require_dir("legacy-0.1.0")
    for f in sorted(legacy.glob("*/*.asdf")):
        data = f.read_bytes()
        if len(data) <= 8192:
            put("legacy_blocks", data)
    for seed in legacy_chains():
        put("legacy_blocks", seed)
    h5data = ROOT / "asdf-hdf5" / "tests" / "data"
    others = [f for f in sorted((h5data / "other_writers").iterdir()) if f.suffix in (".h5", ".nc")]
    for f in sorted(h5data.glob("*.h5")) + others:
        data = f.read_bytes()
        if len(data) <= 65536:
            put("hdf5", data)
    for f in sorted(testdata.require_dir("asdf-in-fits").glob("*.fits")):
        data = f.read_bytes()
        if len(data) <= 65536:
            put("fits", data)
    i = 0
    for name in ("fixtures", "libasdf", "python-asdf", "reference-files"):
        folder = testdata.require_dir(name)
        for f in sorted(folder.rglob("*.asdf")):
            data = f.read_bytes()
            if len(data) <= 32768 and b"ndarray" in data:
                t = REGION_SELECTIONS[i % len(REGION_SELECTIONS)].encode()
                put("region", bytes([len(t)]) + t + data)
                i += 1
    (SEEDS / "manifest").symlink_to("open_read")
    for t in sorted(p.name for p in SEEDS.iterdir()):
        n = list((SEEDS / t).iterdir())
        print(f"{t}: {len(n)} seeds, {sum(p.stat().st_size for p in n)} bytes")


if __name__ == "__main__":
    main()
