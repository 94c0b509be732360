"""numcodecs codecs for the pieces of ASDF blocks that numcodecs itself cannot read.

``asdftool references FILE -o refs.json`` writes a kerchunk reference set whose zarr
arrays point at the pieces of the file's blocks. Most pieces are read by numcodecs' own
codecs (``zlib``, ``bz2``, ``zstd``, ``blosc``, ``lz4``); the others name the codecs of
this module, which decode through asdf-rs (``asdf_rs._decode``):

========================  ==========================================================
``codec_id``              the bytes of a chunk
========================  ==========================================================
``asdf_lz4f``             one lz4 frame (a ``lz4f`` block)
``asdf_blosc2``           one Blosc2 chunk (a ``bls2`` block, a chunk of a ``bsc2``
                          block)
``asdf_lz4``              one sub-block of python asdf's ``lz4`` framing (numcodecs'
                          ``lz4`` buffer: a 4-byte little-endian size, a raw lz4 block)
``asdf_pad``              raw bytes (an uncompressed slab shorter than the others)
``asdf_block``            a whole stored block of the ASDF codec ``codec`` (``lz4`` in
                          python asdf's framing, ``bsc2``, any other label)
========================  ==========================================================

Each takes ``nbytes``, the decoded size of a whole chunk: a shorter piece (the last of a
block, which zarr wants as long as the others) is padded with zero bytes to it, which zarr
then cuts off at the array's edge.

Import this module before opening the references, which registers the codecs with
``numcodecs.register_codec``::

    import asdf_rs.codecs
    import fsspec, zarr
    fs = fsspec.filesystem("reference", fo="refs.json")
    root = zarr.open(store=fs.get_mapper(""), mode="r")

The codecs only decode; encoding raises ``NotImplementedError``.
"""

import struct

import numcodecs
from numcodecs.abc import Codec
from numcodecs.compat import ensure_bytes, ndarray_copy

from ._asdf_rs import _decode

__all__ = ["AsdfBlock", "AsdfBlosc2", "AsdfLz4", "AsdfLz4f", "AsdfPad"]


class _Decoder(Codec):
    """A codec that decodes through asdf-rs; ``nbytes`` is a whole chunk's decoded size."""

    codec_id = None

    def __init__(self, nbytes):
        self.nbytes = int(nbytes)

    def get_config(self):
        return {"id": self.codec_id, "nbytes": self.nbytes}

    def encode(self, buf):
        raise NotImplementedError(f"{self.codec_id} only decodes (asdf-rs references)")

    def _decoded(self, data):
        raise NotImplementedError

    def decode(self, buf, out=None):
        data = self._decoded(ensure_bytes(buf))
        if len(data) > self.nbytes:
            raise ValueError(f"{self.codec_id}: {len(data)} bytes decoded, more than nbytes={self.nbytes}")
        if len(data) < self.nbytes:
            data = data + bytes(self.nbytes - len(data))
        return ndarray_copy(data, out)


class AsdfLz4f(_Decoder):
    """One lz4 frame (a ``lz4f`` block): ``nbytes`` decoded bytes."""

    codec_id = "asdf_lz4f"

    def _decoded(self, data):
        return _decode("lz4f", data, self.nbytes)


class AsdfBlosc2(_Decoder):
    """One Blosc2 chunk; its own header gives its decoded size."""

    codec_id = "asdf_blosc2"

    def _decoded(self, data):
        if len(data) < 16:
            raise ValueError(f"asdf_blosc2: {len(data)} bytes are no Blosc2 chunk")
        (size,) = struct.unpack_from("<i", data, 4)
        return _decode("bls2", data, size)


class AsdfLz4(_Decoder):
    """One sub-block of python asdf's ``lz4`` framing, without its big-endian length."""

    codec_id = "asdf_lz4"

    def _decoded(self, data):
        if len(data) < 4:
            raise ValueError(f"asdf_lz4: {len(data)} bytes are no lz4 sub-block")
        (size,) = struct.unpack_from("<I", data, 0)
        return _decode("lz4", struct.pack(">I", len(data)) + data, size)


class AsdfPad(_Decoder):
    """Raw bytes, padded to ``nbytes`` (the short last slab of an uncompressed block)."""

    codec_id = "asdf_pad"

    def _decoded(self, data):
        return data


class AsdfBlock(_Decoder):
    """A whole stored block of the ASDF codec ``codec``: ``nbytes`` decoded bytes."""

    codec_id = "asdf_block"

    def __init__(self, codec, nbytes):
        super().__init__(nbytes)
        self.codec = str(codec)

    def get_config(self):
        return {"id": self.codec_id, "codec": self.codec, "nbytes": self.nbytes}

    def _decoded(self, data):
        return _decode(self.codec, data, self.nbytes)


for _codec in (AsdfLz4f, AsdfBlosc2, AsdfLz4, AsdfPad, AsdfBlock):
    numcodecs.register_codec(_codec)
