"""Test-only python asdf compressors for the Blosc2 block labels, written from their
definitions, so python asdf can read and write what asdf-rs reads and writes:

- ``bls2`` (asdf-compression's main branch): a block is one Blosc2 chunk.
- ``bsc2`` (abacusutils): a block is one contiguous frame of a 1-D super-chunk.

Both through python-blosc2 (pinned in tests/oracle-requirements.txt). ``register()`` adds
them to python asdf's configuration; without python-blosc2 it does nothing (the files
using them then fail to open, which the checks report).
"""
from __future__ import annotations

CHUNK = 4 << 20


def _cparams(blosc2, typesize):
    return blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, typesize=typesize,
                          filters=[blosc2.Filter.SHUFFLE], filters_meta=[0], nthreads=1)


def register() -> None:
    try:
        import blosc2
    except ImportError:
        return
    import asdf
    from asdf.extension import Compressor, Extension

    class Bls2(Compressor):
        label = b"bls2"

        def compress(self, data, typesize=8, **kwargs):
            yield blosc2.compress2(bytes(data), cparams=_cparams(blosc2, typesize))

        def decompress(self, data, out, **kwargs):
            raw = blosc2.decompress2(b"".join(data))
            out[:] = raw
            return len(raw)

    class Bsc2(Compressor):
        label = b"bsc2"

        def compress(self, data, typesize=8, **kwargs):
            chunk = max(1, CHUNK // typesize) * typesize
            s = blosc2.SChunk(chunksize=chunk, cparams=_cparams(blosc2, typesize))
            raw = bytes(data)
            for i in range(0, len(raw), chunk):
                s.append_data(raw[i:i + chunk])
            yield s.to_cframe()

        def decompress(self, data, out, **kwargs):
            s = blosc2.schunk_from_cframe(b"".join(data), copy=True)
            pos = 0
            for i in range(s.nchunks):
                piece = s.decompress_chunk(i)
                out[pos:pos + len(piece)] = piece
                pos += len(piece)
            return pos

    class Blosc2Blocks(Extension):
        extension_uri = "asdf://asdf-rs.example/tests/extensions/blosc2-blocks-1.0.0"
        compressors = [Bls2(), Bsc2()]

    config = asdf.get_config()
    if not any(getattr(e, "extension_uri", None) == Blosc2Blocks.extension_uri
               for e in config.extensions):
        config.add_extension(Blosc2Blocks())
