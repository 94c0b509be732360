"""Python asdf Compressors that write block payloads as ASDF.jl 2.0.0 writes them.

Shared by `generate.py` (beside this file, which writes the fixtures) and
`tests/oracle/other_labels.py` (which reads files asdf-rs wrote). Python asdf 6.0.0 writes the
block headers; these classes only make the stored bytes.

- `xz\\0\\0` (`XzCompressor`): ASDF.jl calls CodecXz's `transcode(XzCompressor, data)`, whose
  defaults are `level=6, check=LZMA_CHECK_CRC64` through liblzma's `lzma_easy_encoder`; python's
  `lzma.compress(format=FORMAT_XZ, check=CHECK_CRC64, preset=6)` calls the same liblzma
  function with the same preset and check. Reading accepts concatenated streams, as
  `lzma.decompress` does.
- `lz4\\0` as a frame (`Lz4FrameOrChunksCompressor`): ASDF.jl's `lz4_layout=:frame` calls
  ChunkCodecLibLz4's `encode(LZ4FrameEncodeOptions(; compressionLevel=12, blockSizeID=7), data)`,
  i.e. liblz4's `LZ4F_compressFrame` with level 12, 4 MiB blocks, linked blocks and no content
  size, content checksum or block checksums (the option defaults); python-lz4's
  `lz4.frame.compress` with the same settings calls the same liblz4 function. Blocks whose
  decoded size is in `python_framing_nbytes` (set by the caller) are written in python asdf's
  own lz4 chunk framing instead (ASDF.jl's default `lz4_layout=:block`; python asdf hands a
  Compressor the bytes only, so the size is what tells the arrays apart), so one file holds
  both layouts under the one label. Reading tells them apart by the frame magic 04 22 4D 18,
  as ASDF.jl's `decode_Lz4` does.
"""

from __future__ import annotations

import lzma

import asdf
from asdf._compression import Lz4Compressor as PythonLz4

FRAME_MAGIC = b"\x04\x22\x4d\x18"


class XzCompressor(asdf.extension.Compressor):
    label = b"xz"

    def compress(self, data, **kwargs):
        yield lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)

    def decompress(self, data, out, **kwargs):
        decoded = lzma.decompress(b"".join(bytes(b) for b in data), format=lzma.FORMAT_XZ)
        out[: len(decoded)] = decoded
        return len(decoded)


class Lz4FrameOrChunksCompressor(asdf.extension.Compressor):
    label = b"lz4"
    python_framing_nbytes: set[int] = set()

    def compress(self, data, **kwargs):
        import lz4.frame

        if data.nbytes in self.python_framing_nbytes:
            yield from PythonLz4().compress(data)
            return
        yield lz4.frame.compress(
            data,
            compression_level=12,
            block_size=lz4.frame.BLOCKSIZE_MAX4MB,
            block_linked=True,
            content_checksum=False,
            block_checksum=False,
            store_size=False,
        )

    def decompress(self, data, out, **kwargs):
        import lz4.frame

        stored = b"".join(bytes(b) for b in data)
        if not stored.startswith(FRAME_MAGIC):
            return PythonLz4().decompress([stored], out)
        decoded = lz4.frame.decompress(stored)
        out[: len(decoded)] = decoded
        return len(decoded)


class XzExtension(asdf.extension.Extension):
    extension_uri = "asdf://asdf-rs.test/extensions/asdfjl-xz-1.0.0"
    compressors = [XzCompressor()]


class Lz4FrameExtension(asdf.extension.Extension):
    extension_uri = "asdf://asdf-rs.test/extensions/asdfjl-lz4-frame-1.0.0"
    compressors = [Lz4FrameOrChunksCompressor()]
