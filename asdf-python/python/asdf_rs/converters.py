"""Python asdf's converters over a tree read by asdf-rs: astropy, gwcs and datamodel objects.

>>> import asdf_rs
>>> with asdf_rs.open("image.asdf", converters=True) as af:      # doctest: +SKIP
...     af["roman"].meta.exposure.start_time                       # an astropy Time
...     af["roman"].data                                           # lazy, read when used

``asdf_rs.open(path, converters=True)`` (the same as ``asdf_rs.converters.open(path)``) reads
the file with asdf-rs (header, YAML, blocks' headers; arrays stay unread) and then hands every
tagged node to the converter python asdf 6.0 would use for its tag: the converters of the
installed extensions (asdf-astropy, gwcs, roman_datamodels, stdatamodels, asdf's own core
converters, anything registered through the ``asdf.extensions`` / ``asdf.resource_mappings``
entry points or ``asdf.get_config()``), found through python asdf's own ``ExtensionManager`` and
called with python asdf's own ``SerializationContext``. So the objects are the ones
``asdf.open(path)`` gives: ``Quantity``, ``Time``, units, tables, ``gwcs.WCS``, roman_datamodels'
and stdatamodels' nodes, ``asdf.tags.core`` ``Software``/``HistoryEntry``/``ExtensionMetadata``,
and the root is an ``asdf.tags.core.AsdfObject``. Importing this module imports python asdf;
``import asdf_rs`` and ``asdf_rs.open(path)`` without converters do not.

What is returned is an :class:`AsdfFile`, a subclass of ``asdf.AsdfFile``: code written against
python asdf takes it where it takes python asdf's (``tree``, ``[key]``, ``keys()``, ``info()``,
``search()``, ``validate()``, ``schema_info()``, ``with ...:``, ``close()``), and so do
``roman_datamodels.datamodels.open(af)`` and ``stdatamodels.jwst.datamodels.ImageModel(af)``
(both accept any ``asdf.AsdfFile`` instance)::

    import roman_datamodels.datamodels as rdm
    model = rdm.open(asdf_rs.open("image.asdf", converters=True))

Its ``rs`` attribute is the underlying :class:`asdf_rs.AsdfFile` (asdf-rs's own ``info``,
``validate`` against the file's tags' schemas, ``verify_checksums``, ``search``).

Arrays are :class:`NDArray` objects: a subclass of python asdf's lazy array type
``asdf.tags.core.ndarray.NDArrayType`` backed by an :class:`asdf_rs.NDArray` (its ``ndarray``
attribute), read by asdf-rs on first use. A
subclass of ``NDArrayType``, not the bare ``asdf_rs.NDArray``, because the converters and
datamodels test for it: asdf-astropy's quantity, table, fits and spectral-coordinate
converters read ``NDArrayType`` values with ``_make_array()``; gwcs's selector converter takes
``(NDArrayType, np.ndarray)`` as an array and anything else as a mapping; roman_datamodels
leaves ``(np.ndarray, NDArrayType)`` values out of its flat dicts and compares them as arrays,
stdatamodels validates them as arrays only when they are one of the two. It keeps
``asdf_rs.NDArray``'s API: ``shape``/``dtype``/``ndim`` without reading, ``path``, ``read()``,
``region(key)`` and ``a[key]`` (before the array is read, only the part selected is read),
``to_dask()``; numpy takes it as an array (``np.asarray``), and python asdf writes and
validates it with its own ndarray converter, as its own arrays (python asdf finds converters by
exact type: opening a file here adds ``NDArray`` to the converters by type of the extension
manager python asdf keeps for that set of extensions, the one every ``asdf.AsdfFile`` with
those extensions shares, so that ``model.save`` and ``validate`` take it). A converter that needs its values reads them
when it converts, as with python asdf (asdf-astropy's quantity, table and time converters;
gwcs's and asdf-astropy's transforms with lookup tables); datamodel nodes keep them unread.
As with ``asdf.open``, arrays are read into memory of their own, writable
(``memmap=False``, the default here); ``memmap=True`` gives asdf-rs's read-only views of the
mapped file where the block allows (python asdf's memory maps are read-only too).

Lazy trees: ``lazy_tree=True`` (default: ``asdf.get_config().lazy_tree``, as ``asdf.open``;
roman_datamodels opens its files with ``lazy_tree=True``) gives python asdf's lazy containers
(subclasses of ``asdf.lazy_nodes.AsdfDictNode``/``AsdfListNode``) that convert a node when it
is first accessed; a converter declaring ``lazy = True`` receives lazy containers (its subtree
converted as it uses it), the others a converted subtree, exactly as python asdf does.

Tags no converter handles stay as python asdf leaves them (``asdf.tagged.TaggedDict``,
``TaggedList``, ``TaggedString``) with python asdf's ``AsdfConversionWarning`` ("... is not
recognized, converting to raw Python data structure"), unless ``ignore_unrecognized_tag=True``.
A converter that fails gives python asdf's warning ("A node failed to convert with: ...") and
leaves the tagged node, or, when ``asdf.get_config().warn_on_failed_conversion`` is False,
raises :class:`ConversionError`; both name the node's tree path (a JSON pointer) and its tag.

Not done as python asdf does: in files of ASDF Standard 1.5.0 and older, the schema defaults
filled in (python asdf's ``legacy_fill_schema_defaults``) are those of the ASDF Standard's own
schemas, which asdf-rs fills (``docs/schema-defaults.md``), not those of the extensions'
schemas, which python asdf fills too; validation on open is asdf-rs's (``validate=True``, not
``asdf.get_config().validate_on_read``), over the ASDF Standard's schemas and, bound
first by :func:`register_extension_schemas`, those of the installed extensions' tags (rad,
asdf-astropy, transforms, WCS, stdatamodels), as python asdf validates; a converter that reads blocks itself through
``SerializationContext.get_block_data_callback`` (none of asdf-astropy's, gwcs's,
roman_datamodels' or stdatamodels' does) fails, with the path and tag named, since the blocks
are asdf-rs's; a converter returning a generator (for recursive trees) is run
to its end after the walk, but a recursive alias is left unconverted where it recurs; a tagged
scalar that asdf-rs parsed as a number is given to its converter as the text python writes for
the number (the file's text for decimal integers, not always for floats).
"""

from __future__ import annotations

import collections
import copy
import inspect
import os
import sys
import types
import warnings
import weakref
from pathlib import Path
from typing import Any, Optional

import asdf
import numpy as np
from asdf import lazy_nodes, tagged
from asdf.config import get_config
from asdf.exceptions import AsdfConversionWarning
from asdf.extension._serialization_context import BlockAccess
from asdf.tags.core import AsdfObject
from asdf.tags.core.ndarray import NDArrayType

from . import _asdf_rs

__all__ = ["AsdfFile", "ConversionError", "NDArray", "open"]


class ConversionError(_asdf_rs.AsdfError):
    """A converter failed on a node: ``path`` (a JSON pointer) and ``tag`` say which; the
    converter's exception is the ``__cause__``."""

    def __init__(self, message: str, path: str, tag: str):
        super().__init__(message)
        self.path = path
        self.tag = tag


class NDArray(NDArrayType):
    """An array of the file for python asdf's converters: python asdf's lazy ``NDArrayType``
    whose data asdf-rs reads (``ndarray``, an :class:`asdf_rs.NDArray`) on first use."""

    def __init__(self, array: _asdf_rs.NDArray):
        # NDArrayType's own fields, as its constructor would set them for an unread block
        # (`_source` None: not an external block; `_make_array` is ours)
        self.ndarray = array
        self._source = None
        self._data_callback = None
        self._array = None
        self._mask = None
        self._shape = list(array.shape)
        self._dtype = array.dtype
        self._offset = 0
        self._strides = None
        self._order = "C"

    def _make_array(self):
        if self._array is None:
            self._array = self.ndarray.read()
        return self._array

    def __array__(self, dtype=None, copy=None):
        a = self._make_array()
        if copy:
            return np.array(a, dtype=dtype, copy=True)
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("a copy is needed to change the datatype")
            return a.astype(dtype)
        return a

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.ndarray.shape) if self._array is None else self._array.shape

    @property
    def dtype(self) -> np.dtype:
        return self.ndarray.dtype if self._array is None else self._array.dtype

    @property
    def ndim(self) -> int:
        return self.ndarray.ndim

    def __len__(self) -> int:
        return len(self.ndarray)

    @property
    def path(self) -> Optional[str]:
        """The array's JSON pointer in the file's tree."""
        return self.ndarray.path

    def read(self):
        """The whole array (numpy; a ``numpy.ma.MaskedArray`` when the file gives a mask)."""
        return self._make_array()

    def region(self, key: Any):
        """The part ``key`` selects, read only where selected (``asdf_rs.NDArray.region``)."""
        return self.ndarray.region(key)

    def to_dask(self, chunks: Any = None, name: Optional[str] = None):
        """This array as a ``dask.array.Array`` (``asdf_rs.NDArray.to_dask``)."""
        return self.ndarray.to_dask(chunks=chunks, name=name)

    def __getitem__(self, key: Any):
        if self._array is None:
            return self.ndarray[key]
        return self._array[key]

    def _repr_png_(self):
        return self.ndarray._repr_png_()


_YAML = "tag:yaml.org,2002:"


def _yaml_standard(data: Any, tag: str) -> Any:
    """A node of YAML's own tags that asdf-rs keeps tagged, as python asdf's YAML loader
    constructs it: ``!!omap`` an ``OrderedDict``, ``!!set`` a ``set``, ``!!pairs`` a list of
    pairs (``!!map``, ``!!seq``, ``!!str`` their plain values)."""
    name = tag[len(_YAML) :]
    if name in ("omap", "pairs") and isinstance(data, list):
        pairs = [(k, v) for item in data for k, v in dict(item).items()]
        return collections.OrderedDict(pairs) if name == "omap" else pairs
    if name == "set" and isinstance(data, dict):
        return set(data)
    if name == "map" and isinstance(data, dict):
        return dict(data)
    if name == "seq" and isinstance(data, list):
        return list(data)
    if name == "str" and isinstance(data, str):
        return str(data)
    return None


def _as_text(node: _asdf_rs.Tagged) -> Any:
    """A tagged scalar that asdf-rs parsed as a number, boolean or null, as python asdf's YAML
    loader gives every tagged scalar: a ``TaggedString`` of its text (re-made from the parsed
    value: exact for decimal integers; floats as python writes them)."""
    v = node.value
    if isinstance(v, bool):
        text = "true" if v else "false"
    elif v is None:
        text = "null"
    elif isinstance(v, (int, float)):
        text = repr(v)
    else:
        return node
    out = tagged.TaggedString(text)
    out._tag = node.tag
    return out


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _where(path: Any) -> str:
    """The JSON pointer of a path: a string, or a ``(parent, key)`` pair of the walk, which
    builds pointers only for the nodes that need one (a warning, an error, a lazy node)."""
    keys = []
    while isinstance(path, tuple):
        path, key = path
        keys.append(_escape(key))
    prefix = path or ""
    if keys:
        keys.reverse()
        prefix = f"{prefix}/{'/'.join(keys)}"
    return prefix or "/"


# Tags whose converters turn a string into an immutable object (astropy units): converted once
# per string and file (a file of many Quantities repeats a few unit strings thousands of times,
# and each parse goes through astropy's unit grammar).
_UNIT_TAGS = ("tag:stsci.edu:asdf/unit/unit-", "tag:astropy.org:astropy/units/unit-")


def _immutable(obj: Any) -> bool:
    units = sys.modules.get("astropy.units")
    return units is not None and isinstance(obj, units.UnitBase)


def _name(converter) -> str:
    delegate = getattr(converter, "_delegate", converter)
    return f"{type(delegate).__module__}.{type(delegate).__qualname__}"


class _Walk:
    """A postorder conversion of (part of) a tagged tree, as python asdf's
    ``yamlutil.tagged_tree_to_custom_tree``, knowing each node's path. Containers of the
    tagged tree (ours, made for this walk) are updated in place."""

    def __init__(self, af: AsdfFile, sctx: Any = None):
        self.af = af
        self.sctx = sctx if sctx is not None else af._create_serialization_context(BlockAccess.READ)
        self.manager = self.sctx.extension_manager
        self.cfg = get_config()
        self.done: dict[int, Any] = {}
        self.active: set[int] = set()
        self.generators: list[types.GeneratorType] = []

    def run(self, node: Any, path: Any) -> Any:
        out = self.walk(node, path)
        while self.generators:
            for _ in self.generators.pop(0):
                pass
        return out

    def walk(self, node: Any, path: Any) -> Any:
        if not isinstance(node, (tagged.Tagged, _asdf_rs.Tagged)) and type(node) not in (dict, list):
            return node
        if isinstance(node, _asdf_rs.Tagged):
            node = _as_text(node)
        key = id(node)
        if key in self.done:
            return self.done[key]
        if key in self.active:
            # a recursive alias: the node being converted, left as it is where it recurs
            return node
        self.active.add(key)
        try:
            if isinstance(node, dict):
                items = node.data if isinstance(node, tagged.TaggedDict) else node
                for k, v in items.items():
                    new = self.walk(v, (path, k))
                    if new is not v:
                        items[k] = new
            elif isinstance(node, list):
                items = node.data if isinstance(node, tagged.TaggedList) else node
                for i, v in enumerate(items):
                    new = self.walk(v, (path, i))
                    if new is not v:
                        items[i] = new
            out = node
            tag = getattr(node, "_tag", None)
            if isinstance(node, _asdf_rs.Tagged):
                tag = node.tag
            if tag is not None:
                out = self.convert(node, tag, path)
        finally:
            self.active.discard(key)
        self.done[key] = out
        return out

    def convert(self, node: Any, tag: str, path: Any) -> Any:
        if tag.startswith(_YAML):
            data = node.value if isinstance(node, _asdf_rs.Tagged) else node.data
            std = _yaml_standard(data, tag)
            if std is not None:
                return std
        if not self.manager.handles_tag(tag):
            if not self.af._ignore_unrecognized_tag:
                warnings.warn(
                    f"{tag} is not recognized, converting to raw Python data structure "
                    f"(at {_where(path)})",
                    AsdfConversionWarning,
                    stacklevel=2,
                )
            return node
        converter = self.manager.get_converter_for_tag(tag)
        data = node.value if isinstance(node, _asdf_rs.Tagged) else node.data
        if isinstance(data, str) and tag.startswith(_UNIT_TAGS):
            cache = self.af._scalar_objects
            key = (tag, data)
            obj = cache.get(key)
            if obj is None:
                obj = _call(self.af, converter, data, node, tag, path, self.sctx, self.generators)
                if _immutable(obj):
                    cache[key] = obj
            return obj
        return _call(self.af, converter, data, node, tag, path, self.sctx, self.generators)


def _call(af, converter, data, node, tag, path, sctx, generators) -> Any:
    """``converter.from_yaml_tree`` as python asdf calls it, its failure named by path and tag."""
    cfg = get_config()
    try:
        obj = converter.from_yaml_tree(data, tag, sctx)
        if isinstance(obj, types.GeneratorType):
            generator = obj
            obj = next(generator)
            generators.append(generator)
    except ConversionError:
        # a node below, converted while this converter ran (a lazy one's lazy subtree)
        raise
    except Exception as err:
        if cfg.warn_on_failed_conversion:
            warnings.warn(
                f"A node failed to convert with: {err} (at {_where(path)}, tag {tag}, "
                f"converter {_name(converter)})",
                AsdfConversionWarning,
                stacklevel=3,
            )
            obj = node
        else:
            raise ConversionError(
                f"{_where(path)}: converting {tag} with {_name(converter)} failed: "
                f"{type(err).__name__}: {err}",
                _where(path),
                tag,
            ) from err
    sctx.assign_object(obj)
    sctx.assign_blocks()
    sctx._mark_extension_used(converter.extension)
    return obj


def _lazy(node: Any, af_ref, path: Any) -> Any:
    """python asdf's ``lazy_nodes._to_lazy_node``, with paths."""
    if isinstance(node, tagged.TaggedList):
        return tagged.TaggedList(_lazy(node.data, af_ref, path), node._tag)
    if isinstance(node, tagged.TaggedDict):
        return tagged.TaggedDict(_lazy(node.data, af_ref, path), node._tag)
    if type(node) is list:
        return _LazyList(node, af_ref, path)
    if type(node) is collections.OrderedDict:
        return _LazyOrderedDict(node, af_ref, path)
    if type(node) is dict:
        return _LazyDict(node, af_ref, path)
    return node


class _LazyNode:
    """python asdf's ``lazy_nodes._AsdfNode._convert_and_cache``, naming paths."""

    _path = ""

    def _convert_and_cache(self, value, key):
        if isinstance(value, lazy_nodes._AsdfNode):
            return value
        if isinstance(value, (tagged.TaggedDict, tagged.TaggedList)) and isinstance(
            value.data, lazy_nodes._AsdfNode
        ):
            return value
        if not isinstance(value, (tagged.Tagged, _asdf_rs.Tagged)) and type(value) not in (
            dict,
            list,
            collections.OrderedDict,
        ):
            # converted already, or a scalar or array (a converted object may be a dict)
            return value
        af = lazy_nodes._resolve_af_ref(self._af_ref)
        if (obj := af._tagged_object_cache.retrieve(value)) is not None:
            self[key] = obj
            return obj
        path = (self._path, key)
        original = value
        if isinstance(value, _asdf_rs.Tagged):
            value = _as_text(value)
        if isinstance(value, (tagged.Tagged, _asdf_rs.Tagged)):
            tag = value.tag if isinstance(value, _asdf_rs.Tagged) else value._tag
            manager = af.extension_manager
            raw = value.value if isinstance(value, _asdf_rs.Tagged) else value.data
            std = _yaml_standard(raw, tag) if tag.startswith(_YAML) else None
            if std is not None:
                obj = _lazy(std, self._af_ref, path)
            elif not manager.handles_tag(tag):
                if not af._ignore_unrecognized_tag:
                    warnings.warn(
                        f"{tag} is not recognized, converting to raw Python data structure "
                        f"(at {_where(path)})",
                        AsdfConversionWarning,
                        stacklevel=3,
                    )
                obj = _lazy(value, self._af_ref, path)
            else:
                converter = manager.get_converter_for_tag(tag)
                delegate = getattr(converter, "_delegate", converter)
                if not getattr(converter, "lazy", False) or inspect.isgeneratorfunction(
                    delegate.from_yaml_tree
                ):
                    obj = af._convert_subtree(value, path)
                else:
                    data = _lazy(raw, self._af_ref, path)
                    sctx = af._create_serialization_context(BlockAccess.READ)
                    generators: list = []
                    obj = _call(af, converter, data, value, tag, path, sctx, generators)
                    if obj is value:
                        obj = _lazy(value, self._af_ref, path)
                    for g in generators:
                        for _ in g:
                            pass
        else:
            obj = _lazy(value, self._af_ref, path)
        af._tagged_object_cache.store(original, obj)
        self[key] = obj
        return obj


class _LazyDict(_LazyNode, lazy_nodes.AsdfDictNode):
    def __init__(self, data=None, af_ref=None, path=""):
        lazy_nodes.AsdfDictNode.__init__(self, data, af_ref)
        self._path = path

    def __copy__(self):
        return _LazyDict(self.data.copy(), self._af_ref, self._path)


class _LazyOrderedDict(_LazyNode, lazy_nodes.AsdfOrderedDictNode):
    def __init__(self, data=None, af_ref=None, path=""):
        lazy_nodes.AsdfOrderedDictNode.__init__(self, data, af_ref)
        self._path = path

    def __copy__(self):
        return _LazyOrderedDict(self.data.copy(), self._af_ref, self._path)


class _LazyList(_LazyNode, lazy_nodes.AsdfListNode):
    def __init__(self, data=None, af_ref=None, path=""):
        lazy_nodes.AsdfListNode.__init__(self, data, af_ref)
        self._path = path

    def __copy__(self):
        return _LazyList(self.data.copy(), self._af_ref, self._path)


def _know_arrays(manager) -> None:
    """python asdf finds a converter for an object by its exact type, not for subclasses: the
    manager (python asdf caches one per set of extensions, so every ``asdf.AsdfFile`` with the
    same extensions shares it) is told to convert :class:`NDArray` with the converter of
    ``NDArrayType`` (python asdf's core ndarray converter, so files written list no extension
    of ours)."""
    if NDArray not in manager._converters_by_type:
        manager._converters_by_type[NDArray] = manager.get_converter_for_type(NDArrayType)


def _uri(source: Optional[str]) -> Optional[str]:
    if source is None:
        return None
    if "://" in source:
        return source
    return Path(source).as_uri()


class AsdfFile(asdf.AsdfFile):
    """A file read by asdf-rs, its tree converted by python asdf's converters: an
    ``asdf.AsdfFile`` (see the module's documentation). Made by ``asdf_rs.open(path,
    converters=True)``; ``rs`` is the underlying :class:`asdf_rs.AsdfFile`."""

    def __init__(
        self,
        rs: _asdf_rs.AsdfFile,
        *,
        lazy_tree: Optional[bool] = None,
        extensions: Any = None,
        ignore_unrecognized_tag: bool = False,
        ignore_missing_extensions: bool = False,
        strict_extension_check: bool = False,
        custom_schema: Optional[str] = None,
    ):
        if strict_extension_check and ignore_missing_extensions:
            raise ValueError(
                "'strict_extension_check' and 'ignore_missing_extensions' are incompatible options"
            )
        super().__init__(
            extensions=extensions,
            ignore_unrecognized_tag=ignore_unrecognized_tag,
            custom_schema=custom_schema,
        )
        self.rs = rs
        self._scalar_objects: dict[tuple[str, str], Any] = {}
        self._idle_read_context: Any = None
        self._mode = "r"
        self._blocks._uri = _uri(rs.source)
        self.version = rs.version
        if lazy_tree is None:
            lazy_tree = get_config().lazy_tree
        tree = rs._tagged_tree(tagged.TaggedDict, tagged.TaggedList, tagged.TaggedString, NDArray)
        if lazy_tree:
            obj = AsdfObject()
            obj.data = _LazyDict(tree, weakref.ref(self), "")
            tree = obj
        else:
            tree = _Walk(self).run(tree, "")
        if not ignore_missing_extensions:
            self._check_extensions(tree, strict=strict_extension_check)
        self._tree = tree

    @property
    def extension_manager(self):
        """python asdf's ``ExtensionManager`` of this file's extensions, taught that
        :class:`NDArray` is written (and validated) by python asdf's own ndarray converter."""
        manager = super().extension_manager
        _know_arrays(manager)
        return manager

    def _convert_subtree(self, node: Any, path: Any) -> Any:
        """A lazy node's conversion (python asdf's ``tagged_tree_to_custom_tree`` of it). The
        file's idle read context is reused: making one checks the file's ASDF Standard version
        against python asdf's, a tenth of a millisecond, which was most of the lazy
        conversion of a file of 10,000 Quantities. A conversion within a conversion (a lazy
        converter reaching into its subtree) gets its own, as does one after a failure."""
        sctx, self._idle_read_context = self._idle_read_context, None
        walk = _Walk(self, sctx)
        out = walk.run(node, path)
        self._idle_read_context = walk.sctx
        return out

    def __deepcopy__(self, memo):
        """A python ``asdf.AsdfFile`` holding a deep copy of the tree (arrays as numpy
        copies), as python asdf's ``copy()`` of an opened file: not tied to this file."""
        return asdf.AsdfFile(copy.deepcopy(self.tree, memo), self.uri, self._user_extensions)

    def copy(self) -> asdf.AsdfFile:
        return copy.deepcopy(self)

    __copy__ = copy

    def close(self) -> None:
        """Closes the file: the tree is emptied, arrays already taken stay usable."""
        if not self._closed:
            self._closed = True
            self._tree = AsdfObject()
            self._tagged_object_cache.clear()
            self._scalar_objects.clear()
            self.rs.close()
        super().close()

    def __repr__(self) -> str:
        return f"<asdf_rs.converters.AsdfFile {self.rs.source or ''}>"


# Schema URIs of the ASDF Standard (asdf-core/schemas): the tags of the standard are bound to
# them by asdf-rs per standard version, so python asdf's bindings of those tags are not taken.
# The transform schemas under the same prefix come from asdf-transform-schemas (asdf-rs carries
# few of them), so their tags are bound.
_OWN_SCHEMA_PREFIXES = (
    "asdf://asdf-format.org/core/",
    "http://stsci.edu/schemas/yaml-schema/",
    "http://json-schema.org/",
)
_registered_tags: set[tuple[str, str]] = set()
_source_set = False
_bound_extensions: Any = None


def _is_own_schema(uri: str) -> bool:
    if uri.startswith("http://stsci.edu/schemas/asdf/"):
        return "/transform/" not in uri
    return uri.startswith(_OWN_SCHEMA_PREFIXES)


def _schema_text(uri: str) -> Optional[bytes]:
    """asdf-rs's schema source: the schema python asdf's resource manager serves for ``uri``
    (asked by asdf-rs only for schemas it neither carries nor has been given)."""
    try:
        return get_config().resource_manager[uri]
    except KeyError:
        return None


def register_extension_schemas() -> None:
    """Makes asdf-rs's validation (``validate=True``) check the tags of every installed python
    asdf extension against their schemas, as python asdf's ``validate_on_read`` does (rad,
    asdf-astropy, the transform and WCS schemas, stdatamodels and the rest): binds each tag to
    its schemas, and makes python asdf's resource manager asdf-rs's schema source, so that a
    schema is read and compiled only when a file first needs it (the first validation of a
    Roman product reads about 40 of the 1,234 schemas the extensions can reach). The ASDF
    Standard's own tags keep asdf-rs's schemas. Process-wide; :func:`open` calls it when
    ``validate=True`` (extensions added since the last call are bound then)."""
    global _source_set, _bound_extensions
    if not _source_set:
        _asdf_rs.set_schema_source(_schema_text)
        _source_set = True
    extensions = get_config().extensions
    if extensions is _bound_extensions:
        return  # python asdf makes a new list when its extensions change
    _bound_extensions = extensions
    for ext in extensions:
        for tag in ext.tags:
            for uri in tag.schema_uris:
                key = (tag.tag_uri, uri)
                if key not in _registered_tags:
                    _registered_tags.add(key)
                    if not _is_own_schema(uri):
                        _asdf_rs.register_tag(tag.tag_uri, uri)


def open(
    path: str | os.PathLike[str],
    *,
    lazy_tree: Optional[bool] = None,
    extensions: Any = None,
    ignore_unrecognized_tag: bool = False,
    ignore_missing_extensions: bool = False,
    strict_extension_check: bool = False,
    custom_schema: Optional[str] = None,
    **options: Any,
) -> AsdfFile:
    """Opens a file with asdf-rs (``options``: :func:`asdf_rs.open`'s ``mode``, ``validate``,
    ``verify_checksums``, ``memmap``, ``storage_options``) and converts its tree with python
    asdf's converters; the other arguments are ``asdf.open``'s."""
    options.setdefault("memmap", False)
    if options.get("validate"):
        register_extension_schemas()
    rs = _asdf_rs.open(path, **options)
    try:
        return AsdfFile(
            rs,
            lazy_tree=lazy_tree,
            extensions=extensions,
            ignore_unrecognized_tag=ignore_unrecognized_tag,
            ignore_missing_extensions=ignore_missing_extensions,
            strict_extension_check=strict_extension_check,
            custom_schema=custom_schema,
        )
    except BaseException:
        rs.close()
        raise
