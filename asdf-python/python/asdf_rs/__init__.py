"""asdf-rs for python: open, read and write ASDF files with the asdf-rs engine.

>>> import asdf_rs, numpy as np
>>> asdf_rs.write("example.asdf", {"data": np.arange(10.0), "meta": {"exposure": 12.5}})
>>> with asdf_rs.open("example.asdf") as f:
...     data = np.asarray(f.tree["data"])
...     f.tree["meta"]["exposure"]
12.5

``open`` returns an :class:`AsdfFile` whose ``tree`` holds python dicts, lists and
scalars; arrays are :class:`NDArray` objects read when used (``numpy.asarray``), as
zero-copy views of the memory map when the block allows. Tags with no python type of
their own come as :class:`Tagged` values. Errors are :class:`AsdfError` (and its
subclasses :class:`ValidationError`, :class:`ChecksumError`) or ``OSError``.
"""

from ._asdf_rs import (
    AsdfError,
    AsdfFile,
    ChecksumError,
    MappedData,
    NDArray,
    Tagged,
    ValidationError,
    __version__,
    convert,
    open,
    preview,
    write,
)
from .dask import concatenate_dask, stack_dask, to_dask

__all__ = [
    "AsdfError",
    "AsdfFile",
    "ChecksumError",
    "MappedData",
    "NDArray",
    "Tagged",
    "ValidationError",
    "__version__",
    "concatenate_dask",
    "convert",
    "open",
    "preview",
    "stack_dask",
    "to_dask",
    "write",
]
