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
``asdf_strided``          the bytes a view of a block lies in (after the block's decoder,
                          for a compressed block): its elements gathered into C order
``asdf_swap``             records: the bytes of each range ``[offset, size]`` of every
                          ``itemsize``-byte item reversed (big-endian fields made
                          little-endian, the one byte order of zarr's record datatype)
``asdf_mask_value``       an array's elements (after the array's own codecs) as its mask:
                          1 where python asdf masks them for the scalar ``mask`` ``value``
``asdf_inline``           the file's first bytes, its header and YAML tree: the inline
                          array at ``pointer`` parsed from the tree's text
``asdf_fits_scale``       the stored big-endian data of a FITS image scaled by ``BSCALE``,
                          ``BZERO``, ``BLANK``: the values astropy computes (big-endian)
``asdf_fits_table``       the rows of a FITS binary table: the records astropy makes of
                          them, field by field (big-endian fields)
``asdf_chain``            a block of an ASDF 0.1.0 encoding chain (its YAML chain, then
                          the encoded data): decoded to ``nbytes``
========================  ==========================================================

The first five take ``nbytes``, the decoded size of a whole chunk: a shorter piece (the last
of a block, which zarr wants as long as the others) is padded with zero bytes to it, which
zarr then cuts off at the array's edge. ``asdf_strided`` takes ``offset`` (the byte of the
view's first element), ``shape``, ``strides`` (bytes, negative and zero ones too) and
``itemsize``; ``asdf_inline`` takes ``pointer`` (the array's JSON pointer), ``dtype``
(numpy's string, checked against the tree's), ``shape`` and ``part`` (``"data"``, or
``"nulls"``: a byte per element, 1 where the tree holds ``null``); ``asdf_fits_scale`` takes
the image's ``bitpix``, ``bscale``, ``bzero`` (``bzero_int``: the ``BZERO`` card's exact
integer, when it is one) and ``blank`` (``None``: none); ``asdf_fits_table`` the table's
``cards`` (``[keyword, value]`` of ``NAXIS1``, ``TFIELDS``, ``TFORMn``, ``TTYPEn``,
``TDIMn``, ``TSCALn``, ``TZEROn``); ``asdf_chain`` ``nbytes`` and ``byteorder`` (that of
the floats a ``quantize`` step makes). Their configurations
and bytes are checked, never trusted: a view reaching outside its bytes, a size that
overflows, a tree that is no ASDF tree raise ``ValueError`` or ``asdf_rs.AsdfError``.

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
import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_bytes, ndarray_copy

from ._asdf_rs import _chain, _decode, _fits_scale, _fits_table_rows, _inline, _strided, _swap

__all__ = ["AsdfBlock", "AsdfBlosc2", "AsdfChain", "AsdfFitsScale", "AsdfFitsTable", "AsdfInline",
           "AsdfLz4", "AsdfLz4f", "AsdfPad", "AsdfMaskValue", "AsdfStrided", "AsdfSwap"]


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


class AsdfStrided(Codec):
    """A view of a block: its elements (``shape``, byte ``strides``, ``itemsize``-byte
    items, the first at byte ``offset``) gathered from the chunk's bytes into C order."""

    codec_id = "asdf_strided"

    def __init__(self, offset, shape, strides, itemsize):
        self.offset = int(offset)
        self.shape = [int(n) for n in shape]
        self.strides = [int(s) for s in strides]
        self.itemsize = int(itemsize)
        if self.offset < 0 or self.itemsize < 1 or any(n < 0 for n in self.shape):
            raise ValueError(f"asdf_strided: offset {self.offset}, shape {self.shape}, "
                             f"itemsize {self.itemsize}")

    def get_config(self):
        return {"id": self.codec_id, "offset": self.offset, "shape": self.shape,
                "strides": self.strides, "itemsize": self.itemsize}

    def encode(self, buf):
        raise NotImplementedError(f"{self.codec_id} only decodes (asdf-rs references)")

    def decode(self, buf, out=None):
        try:
            data = _strided(ensure_bytes(buf), self.offset, self.shape, self.strides,
                            self.itemsize)
        except OverflowError as e:  # a negative or huge number in the configuration
            raise ValueError(f"asdf_strided: {e}") from None
        return ndarray_copy(data, out)


class AsdfSwap(Codec):
    """Records: reverses the bytes of each ``[offset, size]`` range of every ``itemsize``-byte
    item (the file's big-endian fields as zarr's little-endian ones)."""

    codec_id = "asdf_swap"

    def __init__(self, itemsize, ranges):
        self.itemsize = int(itemsize)
        self.ranges = [[int(o), int(n)] for o, n in ranges]

    def get_config(self):
        return {"id": self.codec_id, "itemsize": self.itemsize, "ranges": self.ranges}

    def encode(self, buf):
        raise NotImplementedError(f"{self.codec_id} only decodes (asdf-rs references)")

    def decode(self, buf, out=None):
        try:
            data = _swap(ensure_bytes(buf), self.itemsize, [tuple(r) for r in self.ranges])
        except OverflowError as e:
            raise ValueError(f"asdf_swap: {e}") from None
        return ndarray_copy(data, out)


class AsdfMaskValue(Codec):
    """The mask of an array with a scalar ``mask``: the decoded elements (numpy's ``dtype``,
    a number type) become one byte each, 1 where python asdf masks them: NaNs for a NaN
    ``value``, else as ``numpy.ma.masked_values`` (floats within its tolerance, others
    equal). ``value`` is the number's text (``"-999"``, ``"nan"``, ``"(1+2j)"``)."""

    codec_id = "asdf_mask_value"

    def __init__(self, dtype, value):
        self.dtype = np.dtype(str(dtype))
        if self.dtype.kind not in "biufc" or self.dtype.subdtype is not None:
            raise ValueError(f"asdf_mask_value: dtype {self.dtype}, no number")
        self.value = str(value)
        try:
            self._value = int(self.value)
        except ValueError:  # a float's or complex's text (ValueError when neither)
            self._value = (complex if self.dtype.kind == "c" else float)(self.value)

    def get_config(self):
        return {"id": self.codec_id, "dtype": self.dtype.str, "value": self.value}

    def encode(self, buf):
        raise NotImplementedError(f"{self.codec_id} only decodes (asdf-rs references)")

    def decode(self, buf, out=None):
        data = np.frombuffer(ensure_bytes(buf), dtype=self.dtype)  # ValueError: no whole items
        if np.isnan(self._value):
            mask = np.isnan(data)
        elif self.dtype.kind == "f":
            mask = np.isclose(data, self._value, rtol=1e-5, atol=1e-8)
        else:
            mask = data == self._value
        return ndarray_copy(mask.astype(np.uint8).tobytes(), out)


class AsdfInline(Codec):
    """An inline array, parsed from the text of the tree: the chunk's bytes are the file's
    first bytes up to the end of its tree; ``pointer`` names the array, ``dtype`` and
    ``shape`` are checked against it; ``part="nulls"`` gives its null mask."""

    codec_id = "asdf_inline"

    def __init__(self, pointer, dtype, shape, part="data"):
        self.pointer = str(pointer)
        self.dtype = str(dtype)
        self.shape = [int(n) for n in shape]
        self.part = str(part)

    def get_config(self):
        return {"id": self.codec_id, "pointer": self.pointer, "dtype": self.dtype,
                "shape": self.shape, "part": self.part}

    def encode(self, buf):
        raise NotImplementedError(f"{self.codec_id} only decodes (asdf-rs references)")

    def decode(self, buf, out=None):
        try:
            data = _inline(ensure_bytes(buf), self.pointer, self.dtype, self.shape, self.part)
        except OverflowError as e:
            raise ValueError(f"asdf_inline: {e}") from None
        return ndarray_copy(data, out)


class AsdfFitsScale(Codec):
    """A FITS image scaled by ``BSCALE``/``BZERO``/``BLANK`` (an ASDF-in-FITS ``fits:``
    array): its stored big-endian data become the values astropy computes (unsigned or
    ``int8`` integers for the sign-flipping ``BZERO``s, else ``float32`` for 8- and 16-bit
    data, ``float64`` for wider, blanks NaN), big-endian, by asdf-core's own arithmetic."""

    codec_id = "asdf_fits_scale"

    def __init__(self, bitpix, bscale=1.0, bzero=0.0, bzero_int=None, blank=None):
        self.bitpix = int(bitpix)
        self.bscale = float(bscale)
        self.bzero = float(bzero)
        self.bzero_int = None if bzero_int is None else int(bzero_int)
        self.blank = None if blank is None else int(blank)

    def get_config(self):
        return {"id": self.codec_id, "bitpix": self.bitpix, "bscale": self.bscale,
                "bzero": self.bzero, "bzero_int": self.bzero_int, "blank": self.blank}

    def encode(self, buf):
        raise NotImplementedError(f"{self.codec_id} only decodes (asdf-rs references)")

    def decode(self, buf, out=None):
        try:
            _, data = _fits_scale(ensure_bytes(buf), self.bitpix, self.bscale, self.bzero,
                                  self.bzero_int, self.blank)
        except OverflowError as e:  # a number in the configuration wider than FITS has
            raise ValueError(f"asdf_fits_scale: {e}") from None
        return ndarray_copy(data, out)


class AsdfFitsTable(Codec):
    """The rows of a FITS binary table (an ASDF-in-FITS ``fits:`` array) as the records
    astropy makes of them (logical columns as ``bool``, bits as arrays of ``bool``, strings
    without trailing blanks, ``TSCAL``/``TZERO`` applied), big-endian fields, by asdf-core's
    own conversion; ``cards`` are the ``[keyword, value]`` pairs that describe the columns."""

    codec_id = "asdf_fits_table"

    def __init__(self, cards):
        self.cards = [[str(k), v] for k, v in cards]

    def get_config(self):
        return {"id": self.codec_id, "cards": self.cards}

    def encode(self, buf):
        raise NotImplementedError(f"{self.codec_id} only decodes (asdf-rs references)")

    def decode(self, buf, out=None):
        try:
            _, data = _fits_table_rows(ensure_bytes(buf), [tuple(c) for c in self.cards])
        except (OverflowError, TypeError) as e:
            raise ValueError(f"asdf_fits_table: {e}") from None
        return ndarray_copy(data, out)


class AsdfChain(Codec):
    """A block of an ASDF 0.1.0 encoding chain (files of 2015): decoded by asdf-core's chain
    decoder to ``nbytes``; ``byteorder`` is that of the floats a ``quantize`` step makes."""

    codec_id = "asdf_chain"

    def __init__(self, nbytes, byteorder="<"):
        self.nbytes = int(nbytes)
        self.byteorder = str(byteorder)

    def get_config(self):
        return {"id": self.codec_id, "nbytes": self.nbytes, "byteorder": self.byteorder}

    def encode(self, buf):
        raise NotImplementedError(f"{self.codec_id} only decodes (asdf-rs references)")

    def decode(self, buf, out=None):
        try:
            data = _chain(ensure_bytes(buf), self.nbytes, self.byteorder)
        except OverflowError as e:
            raise ValueError(f"asdf_chain: {e}") from None
        return ndarray_copy(data, out)


for _codec in (AsdfLz4f, AsdfBlosc2, AsdfLz4, AsdfPad, AsdfBlock, AsdfStrided, AsdfSwap, AsdfInline,
               AsdfMaskValue, AsdfFitsScale, AsdfFitsTable, AsdfChain):
    numcodecs.register_codec(_codec)
