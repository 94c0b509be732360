"""The cutout side-by-side of asdf-store (issue 27): a 256 x 256 float32 cutout of a
16k x 16k float32 image, uncompressed and in python asdf's lz4 blocks, read by asdf-rs
(`asdf-store/examples/cutout.rs`) and by python asdf 6.0.0 (+ fsspec over HTTP), from a
local file and over loopback HTTP (`asdf-store/examples/serve.rs`, which counts the bytes it
sends). Python asdf reads the whole block and slices it after; asdf-rs reads the rows (or the
lz4 sub-blocks) the cutout spans.

    # the two files, written by python asdf (the oracle venv: asdf 6.0.0 with lz4)
    .venv-oracle/bin/python asdf-store/benches/cutout_fsspec.py write DIR
    # one cutout with python asdf: a local file or a URL (fsspec's HTTP filesystem);
    # --memmap: a local file memory-mapped (an uncompressed block is then sliced in place)
    .venv-fsspec/bin/python asdf-store/benches/cutout_fsspec.py cutout FILE|URL PATH SEL [--memmap]
    # everything: both files, local and over HTTP, both readers; raw figures
    cargo build --release -p asdfrs-store --example cutout --example serve
    .venv-fsspec/bin/python asdf-store/benches/cutout_fsspec.py compare DIR [--repeat N]

`.venv-fsspec` is made as asdf-store/benches/fsspec-requirements.txt says. Paths of the
release binaries are taken relative to the working directory (the workspace root) or from
ASDF_RS_TARGET (default `target`).
"""

import os
import re
import subprocess
import sys
import time

import numpy as np

SIDE = 16384
PATH = "/sci"
SEL = "5000:5256, 7000:7256"
FILES = ("image-16k.asdf", "image-16k-lz4.asdf")


def parse_sel(text):
    """numpy's slice syntax of the selections used here: `a:b, c:d` (steps allowed)."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if ":" in part:
            out.append(slice(*[int(x) if x.strip() else None for x in part.split(":")]))
        else:
            out.append(int(part))
    return tuple(out)


def write(folder):
    import asdf

    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(27)
    # A sky-like image: a smooth background, stars, float32 noise (barely compressible,
    # as real images are: lz4 keeps the 4 MiB sub-blocks near 4 MiB).
    y = np.arange(SIDE, dtype=np.float32)[:, None]
    image = np.empty((SIDE, SIDE), dtype=np.float32)
    for r in range(0, SIDE, 1024):
        rows = slice(r, r + 1024)
        image[rows] = 100.0 + 0.001 * y[rows] + rng.normal(0, 5, (1024, SIDE)).astype(
            np.float32
        )
    for path, compression in zip(FILES, (None, "lz4")):
        t = time.perf_counter()
        af = asdf.AsdfFile({"sci": image, "meta": {"telescope": "Roman"}})
        af.write_to(os.path.join(folder, path), all_array_compression=compression)
        size = os.path.getsize(os.path.join(folder, path))
        print(f"wrote {path}: {size} bytes in {time.perf_counter() - t:.1f} s")


def cutout(src, path, sel_text, memmap=False):
    """Python asdf's cutout: the array's whole block read, then sliced (with `memmap`, a
    local file's uncompressed block is mapped and sliced in place). Prints the seconds of
    open and cutout, the shape and the sum."""
    import asdf

    sel = parse_sel(sel_text)
    t = time.perf_counter()
    if "://" in src:
        import fsspec

        f = fsspec.open(src, "rb").open()
    else:
        f = open(src, "rb")
    with f:
        with asdf.open(f, lazy_load=True, memmap=memmap) as af:
            opened = time.perf_counter() - t
            t = time.perf_counter()
            part = np.array(af[path.strip("/")][sel])
            read = time.perf_counter() - t
    print(
        f"open {opened:.6f} s; cutout {read:.6f} s; in all {opened + read:.6f} s; "
        f"shape {list(part.shape)}, sum {part.astype(np.float64).sum()}"
    )
    return part


class Server:
    """The serve example: one URL per file; on each line written to it, the bytes sent."""

    def __init__(self, binary, files):
        self.proc = subprocess.Popen(
            [binary, *files], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.urls = [self.proc.stdout.readline().strip() for _ in files]

    def sent(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        m = re.match(r"sent (\d+) bytes in (\d+) GETs", line)
        return int(m.group(1)), int(m.group(2))

    def close(self):
        self.proc.kill()
        self.proc.wait()


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return out.strip()


def compare(folder, repeat):
    target = os.environ.get("ASDF_RS_TARGET", "target")
    cut = os.path.join(target, "release", "examples", "cutout")
    serve = os.path.join(target, "release", "examples", "serve")
    files = [os.path.join(folder, f) for f in FILES]
    print(f"cutout {PATH}[{SEL}] of a {SIDE}x{SIDE} float32 image; {sys.version.split()[0]}")
    for f in files:
        print(f"\n== {os.path.basename(f)} ({os.path.getsize(f)} bytes)")
        print("-- local file")
        print("asdf-rs: " + run([cut, f, PATH, SEL, "--repeat", "100"]).replace("\n", "\n         "))
        for _ in range(repeat):
            print("python : ", end="", flush=True)
            cutout(f, PATH, SEL)
        for _ in range(repeat):
            print("python memmap=True: ", end="", flush=True)
            cutout(f, PATH, SEL, memmap=True)
    server = Server(serve, files)
    try:
        for f, url in zip(files, server.urls):
            print(f"\n== {os.path.basename(f)} over loopback HTTP ({url})")
            for label, extra in (("asdf-rs", []), ("asdf-rs --gap 0", ["--gap", "0"])):
                for _ in range(repeat):
                    before = server.sent()
                    out = run([cut, url, PATH, SEL, *extra])
                    after = server.sent()
                    print(f"{label}: " + out.replace("\n", "; "))
                    print(
                        f"  server sent {after[0] - before[0]} bytes in "
                        f"{after[1] - before[1]} GETs"
                    )
            for _ in range(repeat):
                before = server.sent()
                print("python asdf + fsspec: ", end="", flush=True)
                cutout(url, PATH, SEL)
                after = server.sent()
                print(
                    f"  server sent {after[0] - before[0]} bytes in {after[1] - before[1]} GETs"
                )
    finally:
        server.close()


def main():
    args = sys.argv[1:]
    if args[:1] == ["write"] and len(args) == 2:
        write(args[1])
    elif args[:1] == ["cutout"] and len(args) in (4, 5):
        memmap = args[4:] == ["--memmap"]
        if len(args) == 5 and not memmap:
            sys.exit(__doc__)
        cutout(*args[1:4], memmap=memmap)
    elif args[:1] == ["compare"] and len(args) in (2, 4):
        repeat = int(args[3]) if len(args) == 4 and args[2] == "--repeat" else 1
        compare(args[1], repeat)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
