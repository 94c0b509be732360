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

``open(path, converters=True)`` gives instead the objects python asdf's converters make
(astropy ``Quantity``/``Time``/units/tables, ``gwcs.WCS``, roman_datamodels and stdatamodels
nodes), in an :class:`asdf_rs.converters.AsdfFile`, a subclass of ``asdf.AsdfFile`` that
``roman_datamodels.datamodels.open`` and stdatamodels' models accept (see
:mod:`asdf_rs.converters`; needs python asdf 6: ``pip install asdf-rs[astropy]``, ``[gwcs]``,
``[roman]``, ``[jwst]``). Without ``converters``, nothing of python asdf is imported.

``validate=True`` (on open, and on write by default) checks the tree against the ASDF
Standard's schemas and against your own: :func:`register_schema` (a YAML schema under a URI;
its top-level ``tag`` binds it), :func:`register_tag` (a tag or ``*`` pattern to a schema URI),
and :func:`set_schema_source` (a function giving a schema's YAML by URI, asked once per URI
when a validation first needs it: a schema store that costs only what is used).
"""

from __future__ import annotations

import os as _os
from typing import Any as _Any
from typing import Optional as _Optional

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
    preview,
    register_schema,
    register_tag,
    set_schema_source,
)
from ._asdf_rs import open as _open
from ._asdf_rs import write as _write
from .dask import concatenate_dask, stack_dask, to_dask


def open(
    path: "str | _os.PathLike[str]",
    *,
    mode: str = "r",
    validate: bool = False,
    verify_checksums: bool = False,
    memmap: _Optional[bool] = None,
    storage_options: _Optional[dict] = None,
    converters: bool = False,
    **asdf_options: _Any,
) -> _Any:
    """Opens an ASDF file (header, tree and block headers; arrays are read when used).

    ``path`` is a local path or an ``s3://``, ``gs://``, ``az://``, ``http(s)://`` URL (read
    through asdf-store with range requests; ``storage_options`` are its store options, such
    as ``{"region": "us-east-1"}``). ``memmap=True`` (the default without ``converters``) maps
    a local file, so uncompressed native-endian arrays are read-only numpy views of the map (no
    copy); with ``converters=True`` the default is python asdf's, ``memmap=False``: arrays
    are read into memory of their own, writable, when first used. ``verify_checksums=True``
    checks each block's MD5 as it is read; ``validate=True`` validates the tree against the
    schemas of its tags first.

    Returns an :class:`AsdfFile` whose tree holds dicts, lists, scalars, :class:`NDArray` and
    :class:`Tagged` values. With ``converters=True``, an :class:`asdf_rs.converters.AsdfFile`
    (an ``asdf.AsdfFile``) whose tagged nodes are the objects of python asdf's converters;
    ``asdf_options`` are then ``asdf.open``'s ``lazy_tree``, ``extensions``,
    ``ignore_unrecognized_tag``, ``ignore_missing_extensions``, ``strict_extension_check``,
    ``custom_schema`` (see :mod:`asdf_rs.converters`).
    """
    if memmap is None:
        memmap = not converters
    options = dict(
        mode=mode,
        validate=validate,
        verify_checksums=verify_checksums,
        memmap=memmap,
        storage_options=storage_options,
    )
    if not converters:
        if asdf_options:
            raise TypeError(
                f"open() got unexpected keyword arguments {sorted(asdf_options)} "
                "(python asdf's options apply with converters=True)"
            )
        return _open(path, **options)
    from .converters import open as open_converted

    return open_converted(path, **asdf_options, **options)


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
    "register_schema",
    "register_tag",
    "set_schema_source",
    "stack_dask",
    "to_dask",
    "write",
]


def write(
    path: "str | _os.PathLike[str]",
    tree: dict,
    *,
    compression: _Optional[str] = None,
    compression_level: _Optional[int] = None,
    validate: bool = True,
    checksums: bool = True,
    standard: _Optional[str] = None,
    inline_threshold: _Optional[int] = None,
    extensions: _Optional[list] = None,
) -> None:
    """Writes a tree of dicts, lists, scalars and numpy arrays as an ASDF file, atomically.

    ``extensions``: extension-metadata entries (python asdf's ``history.extensions``
    entries, mappings with ``extension_class``, ``extension_uri``, ``software``...) that the
    file's ``history.extensions`` records, each extension URI once (the tree's own
    ``history.extensions`` are not copied). A value met twice in the tree (the same dict,
    list, ``Tagged`` mapping or converted object) is written once, with an anchor and
    aliases.

    A tree that also holds objects of python asdf's extensions (astropy ``Quantity``,
    ``Time``, units, ``gwcs.WCS``, roman_datamodels and stdatamodels nodes, ...) has them
    turned into YAML by python asdf's converters, as python asdf writes them
    (``asdf_rs._write_objects``); python asdf is imported only for such a tree, and when it
    is not installed, or has no converter for an object, the native writer refuses the
    objects it cannot take; a converter that fails raises its error, named by tree path.
    """
    from . import _write_objects

    options = dict(
        compression=compression,
        compression_level=compression_level,
        validate=validate,
        checksums=checksums,
        standard=standard,
        inline_threshold=inline_threshold,
        extensions=extensions,
    )
    if isinstance(tree, dict) and _write_objects.needs_converters(tree):
        try:
            import asdf  # noqa: F401
        except ImportError:
            return _write(path, tree, **options)
        try:
            return _write_objects.write(path, tree, **options)
        except _write_objects.ConversionError as err:
            if err.__cause__ is not None:
                # a converter failed: its error, named by path and type
                raise
            # an object no converter takes: the native writer's own verdict (its refusal
            # names the path and the type), with the converters' as its cause
            try:
                return _write(path, tree, **options)
            except Exception as native:
                raise native from err
    return _write(path, tree, **options)
