"""asdf_rs in threaded python: reads from several threads give the right arrays, and the
GIL is released while a block is read and decoded (another python thread runs meanwhile)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import asdf_rs


def test_many_threads_read_the_same_file(scratch):
    arrays = {f"a{i}": np.arange(i * 1000, (i + 1) * 1000, dtype=np.int64) for i in range(32)}
    out = scratch / "many.asdf"
    asdf_rs.write(out, arrays, compression="zstd")
    with asdf_rs.open(out) as f:
        tree = f.tree

        def read(name):
            # every thread reads every array: the first read of each races with others
            return name, [np.asarray(tree[n]).sum() for n in sorted(arrays)]

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(read, [f"t{i}" for i in range(16)]))
    expected = [arrays[n].sum() for n in sorted(arrays)]
    assert all(sums == expected for _, sums in results)


def test_threads_open_and_read_their_own_files(scratch):
    def work(i):
        p = scratch / f"f{i}.asdf"
        data = np.full((100, 100), i, dtype=np.float32)
        asdf_rs.write(p, {"d": data, "i": i}, compression="zlib")
        with asdf_rs.open(p, verify_checksums=True) as f:
            return f.tree["i"], float(np.asarray(f.tree["d"]).mean())

    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(work, range(12)))
    assert got == [(i, float(i)) for i in range(12)]


def test_the_gil_is_released_while_a_block_is_decoded(scratch):
    # a block that takes a while to decode (bzip2, 64 MiB of varied bytes)
    rng = np.random.default_rng(5)
    data = rng.integers(0, 16, size=64 * 1024 * 1024, dtype=np.uint8)
    out = scratch / "big.asdf"
    asdf_rs.write(out, {"d": data}, compression="bzp2")
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    with asdf_rs.open(out, memmap=False) as f:
        t = threading.Thread(target=ticker)
        t.start()
        time.sleep(0.05)
        start = time.perf_counter()
        a = f.tree["d"].read()
        end = time.perf_counter()
        stop.set()
        t.join()
    assert np.array_equal(a, data)
    during = [x for x in ticks if start < x < end]
    # with the GIL held for the whole read, the ticker could not have run inside it
    assert len(during) >= 2, (end - start, len(ticks))
