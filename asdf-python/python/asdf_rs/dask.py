"""ASDF arrays as dask arrays, read by asdf-rs in whichever process computes them.

>>> import asdf_rs
>>> x = asdf_rs.to_dask("s3://bucket/image.asdf", "/sci",
...                     storage_options={"aws_region": "us-east-1"})
>>> x.mean().compute()                                   # doctest: +SKIP

:func:`to_dask` builds a :class:`dask.array.Array` with :func:`dask.array.from_array` over an
:class:`AsdfRegions`: a small picklable description of the array (the file's path or URL,
the array's tree path, the store options, its shape and dtype). Each task asks it for the
region of its chunk; the process running the task (a ``dask.distributed`` worker maybe, on
another machine) opens the file itself, once per process (``asdf_rs._read_region`` keeps the
opened files), and reads only the bytes of that region, with the GIL released. The graph
holds no data and no opened file.

Chunks, unless asked otherwise, are the array's pieces as its chunk manifest gives them
(``asdftool manifest``), along the first axis in whole rows: slabs of about 8 MiB of rows of
an uncompressed block (or of a view of one), the 4 MiB sub-blocks of python asdf's ``lz4``
blocks, the chunks of a Blosc2 frame (a row that straddles two pieces goes with the second);
a block of another codec (``zlib``, ``zstd``, ``bzp2``, ...) is one piece, read whole, so
one chunk. Chunks asked
for (``chunks=``, as dask takes them) are kept, except that along the first axis their edges
move to the nearest edges of pieces that decode on their own (``lz4``, ``bsc2``), so that no
piece is decoded by two tasks (unless the chunks asked for are less than half a piece: then
they are kept, to bound each task's memory).

An asdf-zarr array (``asdf://asdf-format.org/zarr/tags/zarr-1.0.0``) has its own chunks, a
grid over every axis: they are the default chunks, one task per zarr chunk (a chunk never
written is its fill value, read without touching the file). Chunks asked for are kept.

Masked arrays give dask's masked arrays (chunks of ``numpy.ma.MaskedArray``); datatypes and
byte order are the file's, as python asdf gives them.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _asdf_rs

__all__ = ["AsdfRegions", "concatenate_dask", "stack_dask", "to_dask"]

# Rows of an uncompressed block (or a view) per chunk when no manifest says otherwise.
_SLAB_BYTES = 8 << 20


class AsdfRegions:
    """The array at ``path`` of the ASDF file at ``source`` (a local path or a URL), as an
    object dask reads regions of: ``regions[key]`` reads the part ``key`` (slices and
    integers) selects, in the process that asks, through asdf-rs's per-process cache of
    opened files. It pickles to its description only."""

    __slots__ = ("source", "path", "storage_options", "shape", "dtype", "masked", "_identity",
                 "_manifest")

    def __init__(self, source, path, storage_options=None):
        self.source = _source_text(source)
        self.path = _pointer(path)
        self.storage_options = dict(storage_options) if storage_options else None
        array = _asdf_rs._array(self.source, self.path, self.storage_options)
        try:
            # the manifest's shape counts a streamed array's rows without reading them
            self._manifest = _asdf_rs._manifest(self.source, self.path, self.storage_options,
                                                _SLAB_BYTES)
            self.shape = tuple(self._manifest["shape"])
        except _asdf_rs.AsdfError:  # no manifest (ASDF in FITS, ASDF 0.1.0 chains)
            self._manifest = None
            self.shape = tuple(array.shape)
        self.dtype = np.dtype(array.dtype)
        # the same call the tasks make, on an empty region: masked or not, exact dtype
        empty = self[tuple(slice(0, 0) for _ in self.shape)] if self.shape else self[()]
        self.masked = isinstance(empty, np.ma.MaskedArray)
        self.dtype = empty.dtype
        self._identity = _identity(self.source)

    @property
    def ndim(self):
        return len(self.shape)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        return _asdf_rs._read_region(self.source, self.path, key, self.storage_options)

    def __getstate__(self):
        # the manifest stays with the client: the tasks need only the description
        return {k: getattr(self, k) for k in self.__slots__ if k != "_manifest"}

    def __setstate__(self, state):
        self._manifest = None
        for k, v in state.items():
            setattr(self, k, v)

    def __dask_tokenize__(self):
        opts = tuple(sorted((self.storage_options or {}).items()))
        return ("asdf_rs.AsdfRegions", self.source, self.path, opts, self._identity)

    def __repr__(self):
        return (f"<asdf_rs.AsdfRegions {self.source} {self.path} shape={self.shape} "
                f"dtype={self.dtype}{' masked' if self.masked else ''}>")

    def meta(self):
        """An empty array of the chunks' type (masked or not) and dtype, for dask."""
        empty = np.empty((0,) * self.ndim, dtype=self.dtype)
        return np.ma.masked_array(empty, mask=np.zeros_like(empty, dtype=bool)) if self.masked else empty

    def piece_rows(self):
        """The first-axis edges (row indices, 0 and the row count included) of the array's
        pieces, from its chunk manifest, and whether they decode on their own (``lz4``,
        Blosc2: chunks asked for are rounded to them); ``None`` when the array is one piece
        or its pieces are not slabs of rows."""
        if not self.shape or self._manifest is None or self._manifest.get("zarr"):
            return None
        return _rows_of_manifest(self._manifest, self.shape, self.dtype.itemsize)

    def zarr_chunks(self):
        """The chunk shape of an asdf-zarr array (its pieces are its chunks, a grid over
        every axis), else ``None``."""
        z = self._manifest.get("zarr") if self._manifest is not None else None
        return None if z is None else tuple(z["chunks"])


def _rows_of_manifest(m, shape, itemsize):
    """(edges, independent) from the manifest ``m`` that ``_asdf_rs._manifest`` gives."""
    pieces = m["pieces"]
    row_bytes = itemsize
    for n in shape[1:]:
        row_bytes *= n
    block = m["block"]
    if (not m["whole_block"] and block is not None and block["codec"] is None and row_bytes
            and shape[0] * row_bytes > _SLAB_BYTES):
        # a view of an uncompressed block: any region reads only its bytes, so slabs of rows
        step = max(1, _SLAB_BYTES // row_bytes)
        return list(range(0, shape[0], step)) + [shape[0]], False
    if len(pieces) <= 1:
        return None
    edges = []
    rest = [(0, n) for n in shape[1:]]
    if all(p["region"] is not None and [tuple(r) for r in p["region"][1:]] == rest
           for p in pieces):
        edges = [p["region"][0][0] for p in pieces] + [shape[0]]
    elif m["whole_block"] and row_bytes:
        edges = sorted({p["decoded"][0] // row_bytes for p in pieces} | {0, shape[0]})
    else:
        return None
    edges = sorted(set(edges))
    if edges[0] != 0 or edges[-1] != shape[0]:
        return None
    independent = any(p["codec"] not in ("none",) for p in pieces)
    return edges, independent


def _source_text(source):
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise TypeError(f"a path or URL is wanted, not {type(source).__name__}")
    if "://" in source:
        return source
    # the workers may run elsewhere in the filesystem: an absolute path
    return os.path.abspath(source)


def _pointer(path):
    if not isinstance(path, str):
        raise TypeError(f"the array's tree path is a string (\"/sci\"), not {type(path).__name__}")
    return path if path.startswith("/") else "/" + path


def _identity(source):
    if "://" in source:
        return None
    st = os.stat(source)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _rows_chunks(regions, edges):
    """dask chunks of whole pieces along the first axis (``edges``), other axes whole."""
    first = tuple(b - a for a, b in zip(edges, edges[1:]))
    return (first,) + tuple((n,) for n in regions.shape[1:])


def _default_chunks(regions):
    """The array's pieces; rows of about 8 MiB for a view or an uncompressed array without
    a manifest; one chunk for one piece."""
    if not regions.shape:
        return ()
    grid = regions.zarr_chunks()
    if grid is not None:
        # an asdf-zarr array: its own chunks, the last along each axis cut at the edge
        return tuple(tuple(min(c, n - i) for i in range(0, n, c)) if n else (0,)
                     for c, n in zip(grid, regions.shape))
    pieces = regions.piece_rows()
    if pieces is not None:
        return _rows_chunks(regions, pieces[0])
    return tuple((n,) if n else (0,) for n in regions.shape)


def _round_to_pieces(chunks, edges):
    """Moves each edge of the first axis's chunks to the nearest piece edge (dropping
    chunks that become empty): no piece decoded by two tasks."""
    first = chunks[0]
    bounds = np.cumsum((0,) + tuple(first))
    e = np.asarray(edges)
    moved = []
    for b in bounds:
        j = int(np.argmin(np.abs(e - b)))
        moved.append(int(e[j]))
    moved[0], moved[-1] = 0, int(bounds[-1])
    moved = sorted(set(moved))
    return (tuple(b - a for a, b in zip(moved, moved[1:])),) + tuple(chunks[1:])


def _chunks_for(regions, chunks):
    import dask.array as da

    if chunks is None:
        return _default_chunks(regions)
    norm = da.core.normalize_chunks(chunks, regions.shape, dtype=regions.dtype)
    if regions.shape and regions.shape[0]:
        pieces = regions.piece_rows()
        if pieces is not None and pieces[1]:
            smallest = min(b - a for a, b in zip(pieces[0], pieces[0][1:]))
            # chunks much smaller than a piece are kept: asked for, to bound memory
            if max(norm[0]) * 2 >= smallest:
                norm = _round_to_pieces(norm, pieces[0])
    return norm


def _from_regions(regions, chunks=None, name=None):
    import dask.array as da

    return da.from_array(
        regions,
        chunks=_chunks_for(regions, chunks),
        name=name,
        lock=False,
        asarray=False,
        fancy=False,
        meta=regions.meta(),
        inline_array=False,
    )


def to_dask(source, path=None, chunks=None, storage_options=None, name=None):
    """The array at ``path`` (a JSON pointer such as ``"/sci"``) of the ASDF file at
    ``source`` as a :class:`dask.array.Array`.

    ``source`` is a local path, an ``s3://``, ``gs://``, ``az://`` or ``http(s)://`` URL
    (``storage_options``: asdf-store's options, the same as :func:`asdf_rs.open`'s), or an
    opened :class:`asdf_rs.AsdfFile` (then the file is opened again by its URL, with its
    storage options, or its absolute path in each process that computes; an array of an
    opened file has the same as its ``to_dask()`` method). Chunks are the array's pieces unless ``chunks`` (as dask takes
    them: ``"auto"``, a shape, per-axis sizes) asks otherwise; see the module's
    documentation. Each task reads its chunk's region only, in the process that runs it.
    """
    if isinstance(source, _asdf_rs.AsdfFile):
        if path is None:
            raise TypeError("to_dask(file, path): the array's tree path is missing")
        if storage_options is None:
            storage_options = source.storage_options
        source = source.source
    if path is None:
        raise TypeError("to_dask(source, path): the array's tree path is missing")
    regions = AsdfRegions(source, path, storage_options)
    return _from_regions(regions, chunks, name)


def _described(r):
    return f"shape {r.shape}, dtype {r.dtype}" + (", masked" if r.masked else "")


def _regions_of_many(sources, path, storage_options, axis=None):
    """The :class:`AsdfRegions` of ``path`` in each file (opened on threads), checked to
    agree with the first in shape (but along ``axis``, when given), dtype and mask."""
    sources = list(sources)
    if not sources:
        raise ValueError("no files given")
    with ThreadPoolExecutor(min(16, len(sources))) as pool:
        futures = [pool.submit(AsdfRegions, s, path, storage_options) for s in sources]
        regions = []
        for s, f in zip(sources, futures):
            try:
                regions.append(f.result())
            except Exception as e:
                raise type(e)(f"{s}: {e}") from e
    first = regions[0]

    def shape(r):
        if axis is None or not -len(r.shape) <= axis < len(r.shape):
            return r.shape
        s = list(r.shape)
        del s[axis]
        return (len(r.shape), tuple(s))

    for s, r in zip(sources, regions):
        if shape(r) != shape(first) or r.dtype != first.dtype or r.masked != first.masked:
            raise ValueError(
                f"{s}: {first.path} has {_described(r)}; the first file ({sources[0]}) has "
                f"{_described(first)}")
    return regions


def stack_dask(sources, path, axis=0, chunks=None, storage_options=None):
    """The arrays at ``path`` of the files ``sources`` stacked along a new axis ``axis``
    (:func:`dask.array.stack`), each as :func:`to_dask` gives it. Every array must have
    the first one's shape and dtype: ``ValueError`` names the first file that does not."""
    import dask.array as da

    regions = _regions_of_many(sources, path, storage_options)
    return da.stack([_from_regions(r, chunks) for r in regions], axis=axis)


def concatenate_dask(sources, path, axis=0, chunks=None, storage_options=None):
    """The arrays at ``path`` of the files ``sources`` joined along ``axis``
    (:func:`dask.array.concatenate`). Every array must have the first one's shape and
    dtype (the shape along ``axis`` may differ): ``ValueError`` names the first file that
    does not."""
    import dask.array as da

    regions = _regions_of_many(sources, path, storage_options, axis=axis)
    return da.concatenate([_from_regions(r, chunks) for r in regions], axis=axis)
