"""ASDF files in VirtualiZarr (2.x): :class:`AsdfParser` presents an ASDF file as a virtual
zarr store whose chunks are the pieces of its blocks, read where they lie.

>>> from obstore.store import LocalStore
>>> from obspec_utils.registry import ObjectStoreRegistry
>>> import virtualizarr, asdf_rs.virtualizarr
>>> registry = ObjectStoreRegistry({"file://": LocalStore()})
>>> vds = virtualizarr.open_virtual_dataset("file:///data/image.asdf",          # doctest: +SKIP
...                                         parser=asdf_rs.virtualizarr.AsdfParser(),
...                                         registry=registry)

The parser reads the file's tree and chunk manifests with asdf-rs (``asdf_rs._manifest``: the
file is opened by asdf-rs itself, from a local path, a ``file://`` URL or an ``s3://``,
``gs://``, ``az://``, ``http(s)://`` URL with ``storage_options``); the registry is what
zarr later reads the chunks through.

- Every array of the tree is a zarr array named by its tree path: arrays of the root mapping
  are variables of the root group, arrays of nested mappings variables of nested groups
  (``open_virtual_datatree`` shows them all; ``group="meta/cal"`` one). Dimensions are named
  ``{name}_dim_{i}``.
- The tree's scalars (strings, numbers, booleans, dates as ISO text, lists of those) are the
  attributes of their group.
- Chunks: the array's manifest pieces when they form a regular grid (slabs of equal rows of
  an uncompressed block, python asdf's ``lz4`` sub-blocks and Blosc2 chunks when they end on
  rows), else one chunk, the whole stored block, when the array is its whole block.
- Codecs: numcodecs' ``zlib``, ``bz2``, ``zstd``, ``blosc``, ``lz4`` where they read the
  pieces; for the formats numcodecs lacks, the codecs of :mod:`asdf_rs.codecs`
  (``asdf_lz4``, ``asdf_lz4f``, ``asdf_blosc2``, ``asdf_block``, ``asdf_pad``) as zarr v3
  codecs ``numcodecs.asdf_*``, registered with zarr when this module is imported (and found
  by zarr through the package's ``zarr.codecs`` entry points otherwise).
- A masked array's mask (an ndarray) is a variable of its own, ``{name}_mask``.
- Not virtualized (left out, named in the group attribute ``asdf_rs_not_virtualized``):
  arrays that are views of a block (an offset or strides), that share a compressed block,
  inline arrays, records and strings (zarr v3 has no such datatypes here), and Blosc2
  chunks of a repeated non-zero value. ``asdf_rs.to_dask`` reads every one of them.
"""

from __future__ import annotations

import datetime
import os
import warnings
from urllib.parse import unquote, urlparse

import numpy as np

from . import _asdf_rs
from . import codecs as _codecs  # noqa: F401  (registers the numcodecs codecs)

__all__ = ["AsdfParser"]

_ASDF_CODECS = ("asdf_lz4", "asdf_lz4f", "asdf_blosc2", "asdf_block", "asdf_pad")


def _zarr3_codec(codec_id):
    from zarr.codecs.numcodecs._codecs import _NumcodecsBytesBytesCodec

    name = "".join(p.capitalize() for p in codec_id.split("_")) + "Zarr3"
    return type(name, (_NumcodecsBytesBytesCodec,), {"__module__": __name__},
                codec_name=codec_id)


try:
    import zarr.registry as _zarr_registry

    AsdfLz4Zarr3 = _zarr3_codec("asdf_lz4")
    AsdfLz4fZarr3 = _zarr3_codec("asdf_lz4f")
    AsdfBlosc2Zarr3 = _zarr3_codec("asdf_blosc2")
    AsdfBlockZarr3 = _zarr3_codec("asdf_block")
    AsdfPadZarr3 = _zarr3_codec("asdf_pad")
    for _cls in (AsdfLz4Zarr3, AsdfLz4fZarr3, AsdfBlosc2Zarr3, AsdfBlockZarr3, AsdfPadZarr3):
        _zarr_registry.register_codec(_cls.codec_name, _cls)
except ImportError:  # zarr 3 not installed: the parser is of no use, the module imports
    pass


def _v3(codec_id, **config):
    return {"name": f"numcodecs.{codec_id}", "configuration": config}


# a whole block of each ASDF codec, as one chunk
def _block_codec(codec, nbytes):
    return {
        "zlib": _v3("zlib"),
        "bzp2": _v3("bz2"),
        "zstd": _v3("zstd"),
        "blsc": _v3("blosc"),
        "lz4f": _v3("asdf_lz4f", nbytes=nbytes),
        "bls2": _v3("asdf_blosc2", nbytes=nbytes),
    }.get(codec, _v3("asdf_block", codec=codec, nbytes=nbytes))


def _piece_codec(codec, all_whole, nbytes):
    """The zarr v3 codecs of a grid of pieces of one ``PieceCodec`` name; ``None`` when
    no codec reads them."""
    if codec == "none":
        return [] if all_whole else [_v3("asdf_pad", nbytes=nbytes)]
    simple = {"zlib": "zlib", "bzp2": "bz2", "zstd": "zstd", "blsc": "blosc"}
    if codec in simple:
        return [_v3(simple[codec])]
    if codec == "lz4-block":
        return [_v3("lz4")] if all_whole else [_v3("asdf_lz4", nbytes=nbytes)]
    if codec == "lz4f":
        return [_v3("asdf_lz4f", nbytes=nbytes)]
    if codec == "blosc2-chunk":
        return [_v3("asdf_blosc2", nbytes=nbytes)]
    return None


def _beside(url, uri):
    """An external block file's URI (relative to the file's folder) as a URL."""
    if "://" in uri:
        return uri
    if uri.startswith("/"):
        return "file://" + uri
    return url.rsplit("/", 1)[0] + "/" + uri


def _numeric(dtype):
    return dtype.fields is None and dtype.kind in "biufc" and dtype.subdtype is None


class _NotVirtual(Exception):
    pass


class AsdfParser:
    """VirtualiZarr's parser of ASDF files: ``parser(url, registry) -> ManifestStore``.

    ``group``: the tree path (``"meta/cal"``) of the mapping that becomes the root group
    (default: the tree's root). ``drop_variables``: tree paths (``"sci"``,
    ``"meta/cal/flat"``) to leave out. ``storage_options``: asdf-store's options for
    asdf-rs to open remote URLs with (as :func:`asdf_rs.open`); the chunks themselves are
    read through the registry.
    """

    def __init__(self, group=None, drop_variables=None, storage_options=None,
                 slab_bytes=8 << 20):
        self.group = (group or "").strip("/")
        self.drop_variables = {v.strip("/") for v in (drop_variables or ())}
        self.storage_options = dict(storage_options) if storage_options else None
        self.slab_bytes = int(slab_bytes)

    def __call__(self, url, registry):
        from virtualizarr.manifests import ManifestStore

        source = self._source(url)
        with _asdf_rs.open(source, storage_options=self.storage_options) as f:
            tree = f.tree
            node = tree
            for key in [k for k in self.group.split("/") if k]:
                node = node[int(key) if isinstance(node, list) else key]
            if not isinstance(node, dict):
                raise ValueError(f"{url}: {self.group!r} is not a mapping of the tree")
            group = self._group(url, source, node, self.group)
        return ManifestStore(group=group, registry=registry)

    @staticmethod
    def _source(url):
        """What asdf-rs opens: a local path for ``file://`` URLs and paths, else the URL."""
        if url.startswith("file://"):
            return unquote(urlparse(url).path)
        if "://" not in url:
            return os.path.abspath(url)
        return url

    def _group(self, url, source, mapping, prefix):
        from virtualizarr.manifests import ManifestGroup

        arrays, groups, attrs, left_out = {}, {}, {}, []
        for key, value in mapping.items():
            key = str(key)
            path = f"{prefix}/{key}".strip("/")
            if path in self.drop_variables:
                continue
            if isinstance(value, _asdf_rs.NDArray):
                try:
                    arrays[key] = self._array(url, source, "/" + path, key)
                    if self._has_mask(source, "/" + path):
                        arrays[f"{key}_mask"] = self._array(url, source, f"/{path}/mask",
                                                            f"{key}_mask")
                except _NotVirtual as e:
                    left_out.append(path)
                    warnings.warn(f"{url}: /{path} is not virtualized: {e}", stacklevel=3)
            elif isinstance(value, dict):
                groups[key] = self._group(url, source, value, path)
            else:
                scalar = _attribute(value)
                if scalar is not _NO:
                    attrs[key] = scalar
        if left_out:
            attrs["asdf_rs_not_virtualized"] = left_out
        return ManifestGroup(arrays=arrays, groups=groups, attributes=attrs)

    def _has_mask(self, source, pointer):
        try:
            _asdf_rs._array(source, pointer + "/mask", self.storage_options)
            return True
        except (KeyError, ValueError):
            return False

    def _array(self, url, source, pointer, name):
        from virtualizarr.manifests import ChunkManifest, ManifestArray
        from virtualizarr.manifests.utils import create_v3_array_metadata

        try:
            m = _asdf_rs._manifest(source, pointer, self.storage_options, self.slab_bytes, True)
        except _asdf_rs.AsdfError as e:
            raise _NotVirtual(str(e)) from e
        dtype = np.dtype(m["dtype"])
        if not _numeric(dtype):
            raise _NotVirtual(f"datatype {dtype} (records and strings are not virtualized)")
        shape = tuple(m["shape"])
        chunks, codecs, entries = self._grid(url, m, dtype) or self._whole(url, m) or (None,) * 3
        if chunks is None:
            raise _NotVirtual("a view of its block (offset or strides), a shared or inline block")
        metadata = create_v3_array_metadata(
            shape=shape,
            data_type=dtype,
            chunk_shape=tuple(max(1, c) for c in chunks),
            fill_value=None,
            codecs=codecs,
            dimension_names=[f"{name}_dim_{i}" for i in range(len(shape))],
        )
        grid = tuple(-(-n // max(1, c)) for n, c in zip(shape, chunks))
        return ManifestArray(metadata=metadata,
                             chunkmanifest=ChunkManifest(entries=entries, shape=grid))

    @staticmethod
    def _grid(url, m, dtype):
        chunks = m["zarr_chunks"]
        pieces = m["pieces"]
        if chunks is None or not pieces:
            return None
        codec_names = {p["codec"] for p in pieces}
        if len(codec_names) != 1:
            return None
        chunks = [max(1, c) for c in chunks]
        nbytes = dtype.itemsize * int(np.prod(chunks))
        all_whole = all(p["decoded"][1] - p["decoded"][0] == nbytes for p in pieces)
        codecs = _piece_codec(codec_names.pop(), all_whole, nbytes)
        if codecs is None:
            return None
        entries = {}
        for p in pieces:
            if p["region"] is None:
                return None
            key = ".".join(str(r[0] // c) for r, c in zip(p["region"], chunks)) or "0"
            where = p["file"]
            if where == "repeat":
                if any(p.get("pattern", b"\0")):
                    raise _NotVirtual("a Blosc2 chunk of a repeated non-zero value")
                continue  # a missing chunk: the fill value, zero
            if where == "inline" or where == "unknown":
                return None
            entries[key] = {"path": url if where is None else _beside(url, where),
                            "offset": p["offset"], "length": p["length"]}
        return chunks, codecs, entries

    @staticmethod
    def _whole(url, m):
        b = m["block"]
        if not m["whole_block"] or b is None or b["codec"] is None or b["file"] in ("inline",):
            return None
        shape = tuple(m["shape"])
        key = ".".join("0" for _ in shape) or "0"
        path = url if b["file"] is None else _beside(url, b["file"])
        return (list(shape), [_block_codec(b["codec"], b["data_size"])],
                {key: {"path": path, "offset": b["offset"], "length": b["length"]}})


_NO = object()


def _attribute(value):
    """A tree value as a zarr attribute (JSON), or ``_NO``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else str(value)
    if isinstance(value, float):
        return value if np.isfinite(value) else str(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        items = [_attribute(v) for v in value]
        return _NO if any(i is _NO or isinstance(i, (list, dict)) for i in items) else items
    return _NO
