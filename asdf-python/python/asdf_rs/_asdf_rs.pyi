"""Type stubs of the native module asdf_rs._asdf_rs (re-exported by asdf_rs)."""

import os
from types import TracebackType
from typing import Any, Callable, Literal, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Path = Union[str, os.PathLike[str]]
_Codec = Literal["zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"]

class AsdfError(Exception):
    """A file could not be read or written: malformed, unsupported, or over a limit."""

class ValidationError(AsdfError):
    """The tree does not validate against the schemas of its tags."""

class ChecksumError(AsdfError):
    """A block's MD5 checksum does not match its bytes."""

class Tagged:
    """A tagged node with no python type of its own: its tag URI and its value."""

    tag: str
    value: Any
    def __init__(self, tag: str, value: Any) -> None: ...
    def __getitem__(self, key: Any) -> Any: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...

class NDArray:
    """An ndarray of a file, read on first access (``numpy.asarray``, ``read()``, ``a[...]``).

    Uncompressed native-endian blocks of a memory-mapped file are read-only views of the
    map; anything else is read once into memory. A mask in the file gives a
    ``numpy.ma.MaskedArray`` from ``read()``.
    """

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def ndim(self) -> int: ...
    @property
    def path(self) -> Optional[str]: ...
    def read(self) -> npt.NDArray[Any]: ...
    def __array__(
        self, dtype: Optional[npt.DTypeLike] = None, copy: Optional[bool] = None
    ) -> npt.NDArray[Any]: ...
    def __getitem__(self, key: Any) -> Any:
        """numpy's indexing; before the array is read, integers, slices and `...` read only
        the part they select."""
    def region(self, key: Any) -> npt.NDArray[Any]:
        """The part `key` selects (numpy's basic index, or a string such as
        `"100:228, ::4"`), read only where selected; always a new array."""
    def to_dask(self, chunks: Any = None, name: Optional[str] = None) -> Any:
        """This array as a `dask.array.Array` (`asdf_rs.to_dask` of its file and path)."""
    def __len__(self) -> int: ...
    def _repr_png_(self) -> Optional[bytes]:
        """Jupyter's picture: an image of a 2-D array (the first plane of a larger one), a
        line plot of a 1-D one, at most 512 pixels a side; `None` when it cannot be drawn or
        its plane holds more than 2**26 elements."""

class MappedData:
    """The base object of a view of the memory map: it keeps the file open."""

    @property
    def __array_interface__(self) -> dict[str, Any]: ...

class AsdfFile:
    """An opened ASDF file; a context manager. Arrays taken from it keep it alive."""

    @property
    def tree(self) -> dict[str, Any]: ...
    @property
    def version(self) -> str: ...
    @property
    def path(self) -> Optional[str]: ...
    @property
    def source(self) -> Optional[str]:
        """The URL it was opened from, or its local path made absolute."""
    @property
    def storage_options(self) -> Optional[dict[str, str]]: ...
    def __getitem__(self, key: Any) -> Any: ...
    def __contains__(self, key: Any) -> bool: ...
    def validate(self) -> None: ...
    def verify_checksums(self) -> None: ...
    def info(self, max_rows: Optional[int] = 200) -> str: ...
    def search(
        self, key: Optional[str] = None, *, value: Any = None, tag: Optional[str] = None
    ) -> list[tuple[str, Any]]: ...
    def close(self) -> None: ...
    def _tagged_tree(
        self, tagged_dict: type, tagged_list: type, tagged_string: type, array: Any
    ) -> Any:
        """A new tree for python asdf's converters (asdf_rs.converters): tagged nodes but
        arrays kept as `tagged_dict(value, tag)`, `tagged_list(value, tag)` or
        `tagged_string(value)` with `_tag` set (a tagged scalar of another type as `Tagged`),
        each array as `array(NDArray)`."""
    def __enter__(self) -> "AsdfFile": ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

def open(
    path: _Path,
    *,
    mode: Literal["r"] = "r",
    validate: bool = False,
    verify_checksums: bool = False,
    memmap: bool = True,
) -> AsdfFile:
    """Opens an ASDF file (header, tree and block headers; arrays are read when used)."""

def register_schema(uri: str, yaml: str) -> None:
    """Registers a YAML schema under ``uri`` (and its ``id``), process-wide; its top-level
    ``tag``, if any, is bound to it."""

def register_tag(tag_pattern: str, schema_uri: str) -> None:
    """Nodes whose tag matches ``tag_pattern`` validate against ``schema_uri`` too."""

def set_schema_source(source: Optional[Callable[[str], Union[str, bytes, None]]]) -> None:
    """Sets (``None``: removes) the process-wide source of schemas asdf-rs neither bundles nor
    has registered: ``source(uri)`` gives the YAML text or ``None``; asked once per URI, when a
    validation first needs it."""

def preview(
    source: Union[AsdfFile, _Path],
    path: Optional[str] = None,
    *,
    interval: Literal["zscale", "minmax"] = "zscale",
    percent: Optional[float] = None,
    stretch: Literal["linear", "asinh", "log", "sqrt"] = "linear",
    cmap: Literal["grey", "gray", "viridis", "inferno", "heat", "cool"] = "grey",
    slice: Optional[Sequence[int]] = None,
    max_size: int = 1024,
    x: Optional[str] = None,
    y: Optional[str] = None,
    format: Literal["png", "svg"] = "png",
) -> bytes:
    """PNG (or SVG) bytes of the array at `path` (a JSON pointer or a root key; default the
    first array of 2 or more dimensions, else the first): an image (zscale limits as
    astropy's ZScaleInterval, row 0 at the bottom, bad pixels in the colour map's bad
    colour), a line plot of a 1-D array, or column `y` against `x` of a table."""

def write(
    path: _Path,
    tree: dict[str, Any],
    *,
    compression: Optional[_Codec] = None,
    compression_level: Optional[int] = None,
    validate: bool = True,
    checksums: bool = True,
    standard: Optional[str] = None,
    inline_threshold: Optional[int] = None,
    extensions: Optional[list[Any]] = None,
) -> None:
    """Writes a tree of dicts, lists, scalars and numpy arrays as an ASDF file, atomically;
    ``extensions``: the extension-metadata entries ``history.extensions`` records (each
    extension URI once, the last entry for it in the first one's place)."""

def convert(
    input: _Path,
    output: _Path,
    *,
    compression: Optional[_Codec] = None,
    compression_level: Optional[int] = None,
    validate: bool = True,
    checksums: bool = True,
    standard: Optional[str] = None,
) -> None:
    """Rewrites an ASDF file, re-encoding its blocks as ``compression`` says (None: keep)."""

def _decode(label: str, data: bytes, size: int) -> bytes:
    """Decodes ``data`` stored with the ASDF codec ``label`` into exactly ``size`` bytes
    (for :mod:`asdf_rs.codecs`)."""
