#!/usr/bin/env python3
"""Writes the committed fuzz seeds (fuzz/seeds/TARGET/) from the repository's test data.

    python3 fuzz/make-seeds.py          # standard library only

- open_read, typed_validate: the fixtures and layouts of at most 8 KiB (whole files).
- yaml_parse: the tree text (from `%YAML` or `---` to the end marker) of the same files.
- codecs: every compressed block of the codec fixtures of at most 20 KiB stored, as the
  codecs target reads its input: one byte naming the codec (its index in
  Compression::ALL: zlib bzp2 lz4 zstd lz4f blsc), three bytes of decoded size (big-endian),
  the stored bytes.
- blosc2: the Blosc2 fixtures (asdf-blosc2/tests/data/frames) of at most 16 KiB, as the
  blosc2 target reads its input: a 0 byte and the frame, and a 1 byte and the frame from its
  first chunk on (a chunk followed by the rest of the frame).
"""
import hashlib
import shutil
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import testdata  # noqa: E402

SEEDS = ROOT / "fuzz" / "seeds"
CODECS = [b"zlib", b"bzp2", b"lz4\0", b"zstd", b"lz4f", b"blsc"]


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
    for f in sorted((ROOT / "asdf-blosc2" / "tests" / "data" / "frames").glob("*.b2*")):
        if not f.is_file():
            continue
        data = f.read_bytes()
        if len(data) <= 16384:
            put("blosc2", b"\0" + data)
            header_len = struct.unpack(">i", data[11:15])[0]
            put("blosc2", b"\1" + data[header_len:])
    for t in sorted(p.name for p in SEEDS.iterdir()):
        n = list((SEEDS / t).iterdir())
        print(f"{t}: {len(n)} seeds, {sum(p.stat().st_size for p in n)} bytes")


if __name__ == "__main__":
    main()
