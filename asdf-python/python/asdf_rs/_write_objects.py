"""Writing trees that hold the objects of python asdf's extensions (astropy Quantity, Time and
units, gwcs WCS, roman_datamodels and stdatamodels nodes, ...) with the asdf-rs writer.

python asdf 6.0.0 turns such an object into YAML with the converter an installed extension
registers for its type (``Converter.select_tag`` then ``Converter.to_yaml_tree``; asdf's
``yamlutil.custom_tree_to_tagged_tree``). :func:`to_native_tree` does the same with python
asdf's own extension manager and serialization context, but builds the tree the native writer
takes: dicts, lists, scalars, numpy arrays and :class:`asdf_rs.Tagged` values. The arrays stay
numpy arrays (the native writer stores them in blocks, with the ``core/ndarray`` tag of the
ASDF Standard version, as python asdf does). The extensions used are recorded in
``history.extensions`` as python asdf records them (``core/extension_metadata-1.0.0`` with
``extension_class``, ``extension_uri``, ``software`` and ``manifest_software``).

With ``validate`` the converted tree is checked against python asdf's schemas (roman_datamodels',
stdatamodels', asdf-astropy's, gwcs's: all the installed extensions'), as python asdf checks a
tree it writes, before the native writer checks the ASDF Standard's.

python asdf is imported only when the tree holds an object the native writer cannot take
(:func:`needs_converters`); plain trees go straight to the native writer.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import numpy as np

from . import _asdf_rs
from ._asdf_rs import NDArray, Tagged

# Types the native writer takes as they are (exact types: a subclass of str, dict or
# numpy.ndarray may be an object with a converter, such as astropy's Quantity).
_NATIVE_LEAVES = frozenset(
    {
        str,
        int,
        float,
        bool,
        type(None),
        complex,
        bytes,
        _dt.datetime,
        _dt.date,
        np.ndarray,
        np.ma.MaskedArray,
        NDArray,
    }
)


def needs_converters(tree: Any) -> bool:
    """Whether ``tree`` holds anything the native writer does not take as it is (an object
    of some other type, which a python asdf converter may turn into YAML)."""
    stack = [tree]
    seen = set()
    while stack:
        obj = stack.pop()
        typ = type(obj)
        if typ in _NATIVE_LEAVES:
            continue
        if typ is dict:
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            for k, v in obj.items():
                if type(k) not in _NATIVE_LEAVES:
                    return True
                stack.append(v)
        elif typ is list or typ is tuple:
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            stack.extend(obj)
        elif typ is Tagged:
            stack.append(obj.value)
        elif isinstance(obj, np.generic):
            continue
        else:
            return True
    return False


class ConversionError(TypeError):
    """An object of the tree could not be turned into YAML (the message names its tree path
    and type)."""


def _pointer(path: list) -> str:
    if not path:
        return "/"
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _type_name(obj: Any) -> str:
    typ = type(obj)
    return f"{typ.__module__}.{typ.__qualname__}"


class _Converter:
    """One write's conversion: python asdf's extension manager and serialization context, the
    objects converted so far (by identity, so that a shared object is written once and
    aliased) and the generators to drain at the end (as python asdf's tree walk does)."""

    def __init__(self, standard: str | None):
        import asdf
        from asdf.extension._serialization_context import BlockAccess

        self.asdf = asdf
        self.ctx = asdf.AsdfFile(version=standard) if standard else asdf.AsdfFile()
        self.sctx = self.ctx._create_serialization_context(BlockAccess.WRITE)
        self.sctx.find_available_block_index = self._no_raw_blocks
        self.manager = self.sctx.extension_manager
        self.lazy_nodes = asdf.lazy_nodes
        self.ndarray_type = asdf.tags.core.NDArrayType
        self.python_tagged = asdf.tagged.Tagged
        self.memo: dict[int, Any] = {}
        self.keep: list = []  # the objects of memo's keys, alive until the end
        self.active: set[int] = set()
        self.generators: list = []
        self.converter_of: dict[type, Any] = {}
        self.current: tuple[str, Any] | None = None

    def _no_raw_blocks(self, *_args, **_kwargs):
        where, obj = self.current or ("?", None)
        raise ConversionError(
            f"{where}: the converter of {_type_name(obj)} asks for a block of raw bytes "
            "(SerializationContext.find_available_block_index), which asdf_rs.write does not "
            "write; write this tree with python asdf"
        )

    def _converter(self, typ: type):
        if typ in self.converter_of:
            return self.converter_of[typ]
        conv = None
        if self.manager.handles_type(typ):
            conv = self.manager.get_converter_for_type(typ)
        self.converter_of[typ] = conv
        return conv

    def node(self, obj: Any, path: list) -> Any:
        typ = type(obj)
        if typ in _NATIVE_LEAVES or (isinstance(obj, np.generic) and self._converter(typ) is None):
            return obj
        key = id(obj)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            raise ConversionError(
                f"{_pointer(path)}: the tree contains itself (a cycle) at a "
                f"{_type_name(obj)}; asdf_rs.write writes trees without cycles"
            )
        self.active.add(key)
        try:
            out = self._convert(obj, typ, path)
        finally:
            self.active.discard(key)
        self.memo[key] = out
        self.keep.append(obj)
        return out

    def _children_of_mapping(self, obj, path):
        out = {}
        for k, v in obj.items():
            path.append(k)
            try:
                out[k] = self.node(v, path)
            finally:
                path.pop()
        return out

    def _children_of_sequence(self, obj, path):
        out = []
        for i, v in enumerate(obj):
            path.append(i)
            try:
                out.append(self.node(v, path))
            finally:
                path.pop()
        return out

    def _convert(self, obj: Any, typ: type, path: list) -> Any:
        if typ is dict:
            return self._children_of_mapping(obj, path)
        if typ is list or typ is tuple:
            return self._children_of_sequence(obj, path)
        if typ is Tagged:
            return Tagged(obj.tag, self.node(obj.value, path))
        converter = self._converter(typ)
        if converter is not None and self._is_ndarray_converter(converter):
            return self._array(obj, path)
        if converter is not None:
            return self._with_converter(obj, converter, path)
        # what python asdf's tree walk takes as plain collections and scalars
        if isinstance(obj, self.python_tagged):
            tag = obj._tag
            if isinstance(obj, dict):
                return Tagged(tag, self._children_of_mapping(obj, path))
            if isinstance(obj, list):
                return Tagged(tag, self._children_of_sequence(obj, path))
            if isinstance(obj, str):
                return Tagged(tag, str(obj))
        if isinstance(obj, (dict, self.lazy_nodes.AsdfDictNode)):
            return self._children_of_mapping(obj, path)
        if isinstance(obj, (list, self.lazy_nodes.AsdfListNode)) or (
            isinstance(obj, tuple) and not hasattr(obj, "_fields")
        ):
            return self._children_of_sequence(obj, path)
        if isinstance(obj, self.ndarray_type):
            return self._array(obj, path)
        for base in (bool, int, float, str, bytes, complex):
            if isinstance(obj, base):
                return base(obj)
        if isinstance(obj, np.ndarray):
            return np.asarray(obj)
        raise ConversionError(
            f"{_pointer(path)}: cannot write a {_type_name(obj)}: no installed asdf extension "
            "has a converter for it, and it is not a dict, list, scalar or array"
        )

    def _is_ndarray_converter(self, converter) -> bool:
        delegate = getattr(converter, "_delegate", converter)
        return type(delegate).__name__ == "NDArrayConverter" and type(
            delegate
        ).__module__.startswith("asdf.")

    def _array(self, obj: Any, path: list) -> Any:
        """What python asdf's own ndarray converter takes (an array of a file python asdf
        opened, a subclass of numpy.ndarray with no converter of its own) as the numpy array
        of its values, which the native writer stores in a block."""
        nd = getattr(obj, "ndarray", None)
        if type(nd) is NDArray:
            # asdf_rs.converters' arrays: the asdf_rs array of the file read, which the native
            # writer reads itself
            return nd
        if isinstance(obj, self.ndarray_type):
            try:
                return obj._make_array()
            except Exception as e:
                raise ConversionError(
                    f"{_pointer(path)}: reading the array of a {_type_name(obj)} failed: "
                    f"{type(e).__name__}: {e}"
                ) from e
        if isinstance(obj, np.ma.MaskedArray):
            return np.ma.asarray(obj).view(np.ma.MaskedArray)
        if isinstance(obj, np.ndarray):
            return np.asarray(obj)
        raise ConversionError(
            f"{_pointer(path)}: cannot write a {_type_name(obj)} (a streamed array): "
            "asdf_rs.write writes whole arrays"
        )

    def _with_converter(self, obj: Any, converter, path: list) -> Any:
        """python asdf's ``_convert_obj``: select the tag (a converter that selects none hands
        the object on to the converter of what its ``to_yaml_tree`` returns), then the node,
        tagged, with its children converted in turn."""
        where = _pointer(path)
        self.current = (where, obj)
        sctx = self.sctx
        try:
            tag = converter.select_tag(obj, sctx)
            used = set()
            while tag is None:
                used.add(converter)
                obj = converter.to_yaml_tree(obj, tag, sctx)
                nxt = self._converter(type(obj))
                if nxt is None:
                    # no converter for what it became: written as it is
                    return self.node(obj, path)
                if nxt in used:
                    raise ConversionError(
                        f"{where}: a conversion cycle (the converters of {_type_name(obj)} "
                        "hand the object back and forth)"
                    )
                converter = nxt
                tag = converter.select_tag(obj, sctx)
            sctx.assign_object(obj)
            node = converter.to_yaml_tree(obj, tag, sctx)
            sctx.assign_blocks()
        except ConversionError:
            raise
        except Exception as e:
            raise ConversionError(
                f"{where}: converting a {_type_name(obj)} to YAML failed: "
                f"{type(e).__name__}: {e}"
            ) from e
        finally:
            self.current = None
        if hasattr(node, "__next__") and hasattr(node, "send"):
            generator, node = node, next(node)
            self.generators.append(generator)
        sctx._mark_extension_used(converter.extension)
        if isinstance(node, dict):
            return Tagged(tag, self._children_of_mapping(node, path))
        if isinstance(node, list):
            return Tagged(tag, self._children_of_sequence(node, path))
        if isinstance(node, str):
            return Tagged(tag, str(node))
        raise ConversionError(
            f"{where}: the converter of {_type_name(obj)} ({_type_name(converter)}) returned a "
            f"{_type_name(node)}, not a dict, list or str"
        )

    def drain(self):
        for g in self.generators:
            for _ in g:
                pass
        self.generators = []

    def history(self, old: Any, extensions: Any = None) -> tuple[Any, list]:
        """The tree's ``history`` without its ``extensions``, and the ``history.extensions``
        entries python asdf records for this write (``AsdfFile._update_extension_history``:
        the old history's entries, then ``extensions`` -- the caller's --, updated in place
        or followed by the extensions this write used), both converted. The history is None
        when the tree has none (the native writer makes one for the extensions)."""
        hist = _plain_copy(old) if old is not None else None
        if extensions is not None:
            if hist is None:
                hist = {}
            elif isinstance(hist, list):
                hist = {"entries": hist}
            if isinstance(hist, dict):
                hist["extensions"] = list(hist.get("extensions") or []) + _plain_copy(
                    list(extensions)
                )
        meta = {} if hist is None else {"history": hist}
        with _no_warnings_of(self.asdf):
            self.ctx._update_extension_history(meta, self.sctx)
        if "history" not in meta:
            # a standard before 1.2.0: no extension history
            return old, []
        new = meta["history"]
        exts = new.pop("extensions", []) if isinstance(new, dict) else []
        out_exts = self.node(list(exts), ["history", "extensions"])
        out = None if old is None else self.node(new, ["history"])
        self.drain()
        return out, out_exts

    def validate(self, root: dict) -> None:
        """python asdf's validation of the tree it would write (``AsdfFile._validate``): the
        converted tree, as python asdf's tagged tree, against the schemas of every installed
        extension (the native writer's own validation knows the ASDF Standard's schemas only;
        roman_datamodels', stdatamodels', asdf-astropy's and gwcs's are python asdf's)."""
        from asdf import schema, tagged
        from asdf.tags.core.ndarray import numpy_dtype_to_asdf_datatype

        ndarray_tag = self.manager.get_converter_for_type(np.ndarray).tags[0]
        memo: dict[int, Any] = {}

        def to_tagged(x):
            typ = type(x)
            if typ in (dict, list, Tagged, np.ndarray, np.ma.MaskedArray, NDArray):
                if id(x) in memo:
                    return memo[id(x)]
            if typ is dict:
                out = memo[id(x)] = {}
                for k, v in x.items():
                    out[k] = to_tagged(v)
                return out
            if typ is list or typ is tuple:
                out = memo[id(x)] = []
                out.extend(to_tagged(v) for v in x)
                return out
            if typ is Tagged:
                v = to_tagged(x.value)
                if isinstance(v, dict):
                    out = tagged.TaggedDict(v, x.tag)
                elif isinstance(v, list):
                    out = tagged.TaggedList(v, x.tag)
                elif isinstance(v, str):
                    out = tagged.TaggedString(v)
                    out._tag = x.tag
                else:
                    return v
                memo[id(x)] = out
                return out
            if typ in (np.ndarray, np.ma.MaskedArray, NDArray):
                datatype, byteorder = numpy_dtype_to_asdf_datatype(x.dtype)
                node = {"source": 0, "datatype": datatype, "byteorder": byteorder,
                        "shape": list(x.shape)}
                if typ is np.ma.MaskedArray:
                    node["mask"] = tagged.TaggedDict(dict(node, datatype="bool8"), ndarray_tag)
                out = memo[id(x)] = tagged.TaggedDict(node, ndarray_tag)
                return out
            if typ is complex:
                out = tagged.TaggedString(repr(x).strip("()"))
                out._tag = "tag:stsci.edu:asdf/core/complex-1.0.0"
                return out
            if isinstance(x, np.generic):
                return x.item()
            return x

        tree = to_tagged(root)
        root_tag = self.manager.get_converter_for_type(self.asdf.tags.core.AsdfObject).tags[0]
        try:
            schema.validate(tagged.TaggedDict(tree, root_tag), self.ctx)
        except self.asdf.ValidationError as e:
            where = _pointer(list(e.absolute_path))
            raise _asdf_rs.ValidationError(
                f"the tree does not validate against python asdf's schemas at {where}: "
                f"{e.message}"
            ) from e


def _plain_copy(x: Any) -> Any:
    """A copy of a ``history`` as python asdf's own code takes it: asdf_rs.Tagged values (a
    tree asdf_rs read) become their values, dicts and lists are copied."""
    if type(x) is Tagged:
        return _plain_copy(x.value)
    if isinstance(x, dict):
        return {k: _plain_copy(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain_copy(v) for v in x]
    return x


class _no_warnings_of:
    def __init__(self, asdf):
        import warnings

        self.catch = warnings.catch_warnings()
        self.warnings = warnings
        self.asdf = asdf

    def __enter__(self):
        self.catch.__enter__()
        self.warnings.simplefilter("ignore", self.asdf.exceptions.AsdfWarning)

    def __exit__(self, *exc):
        return self.catch.__exit__(*exc)


def _check_extensions(extensions: Any) -> None:
    """The native writer's check of its ``extensions`` (the same errors), before python asdf
    takes them as history entries."""
    if not isinstance(extensions, (list, tuple)):
        raise TypeError(
            "extensions must be a list of extension metadata mappings, not "
            f"{type(extensions).__name__}"
        )
    for i, e in enumerate(extensions):
        if type(e) is Tagged:
            if not e.tag.startswith("tag:stsci.edu:asdf/core/extension_metadata-"):
                raise ValueError(
                    f"extensions[{i}]: a value tagged {e.tag}, not core/extension_metadata"
                )
            e = e.value
        if not isinstance(e, dict):
            raise TypeError(
                f"extensions[{i}]: {type(e).__name__} is not an extension metadata mapping"
            )
        uri = e.get("extension_uri")
        if "extension_uri" in e and not isinstance(uri, str):
            raise TypeError(
                f"extensions[{i}]: extension_uri must be a str, not {type(uri).__name__}"
            )
        if uri is None and not isinstance(e.get("extension_class"), str):
            raise ValueError(
                f"extensions[{i}]: an extension metadata mapping needs a str extension_uri "
                "(or, for a legacy extension, a str extension_class)"
            )


def to_native_tree(
    tree: dict, standard: str | None = None, validate: bool = False, extensions: Any = None
) -> tuple[dict, list, str]:
    """``tree`` with every object python asdf has a converter for turned into
    :class:`asdf_rs.Tagged` / dict / list / numpy array values (an object met twice becomes
    the same value, which the native writer writes once and aliases, as python asdf does),
    the ``history.extensions`` entries recording the extensions used (the tree's own and
    ``extensions`` -- the caller's -- first, updated as python asdf updates them; the native
    writer's ``extensions``), and the ASDF Standard version the tags were selected for
    (python asdf's default when ``standard`` is None). ``validate``: the converted tree is
    checked against python asdf's schemas too, as python asdf checks a tree it writes
    (:class:`asdf_rs.ValidationError` naming the place)."""
    if extensions is not None:
        _check_extensions(extensions)
    conv = _Converter(standard)
    out = {}
    path: list = []
    for k, v in tree.items():
        if k in ("asdf_library", "history"):
            continue
        path.append(k)
        try:
            out[k] = conv.node(v, path)
        finally:
            path.pop()
    conv.drain()
    history, exts = conv.history(tree.get("history"), extensions)
    if validate:
        hist = history.value if type(history) is Tagged else history
        if isinstance(hist, dict) or (hist is None and exts):
            hist = {**(hist or {}), "extensions": exts}
        conv.validate({"history": hist, **out} if hist is not None else out)
    if history is not None:
        out = {"history": history, **out}
    return out, exts, conv.ctx.version_string


def write(path, tree, **kwargs) -> None:
    """``asdf_rs.write`` for trees holding objects of python asdf's extensions: the tree
    converted by :func:`to_native_tree` (with ``validate`` -- the default -- checked against
    python asdf's schemas as well as the native writer's), then written by the native writer
    with the same keyword arguments (``standard`` defaults to python asdf's default version,
    for which the converters selected their tags; ``extensions`` are the entries python asdf
    would record in ``history.extensions``). A plain tree goes to the native writer as it is
    (python asdf is not imported).

    An object met twice is written once, with an anchor and aliases, as python asdf writes
    it. Not as python asdf: a converter asking for a raw block of its own
    (``find_available_block_index``) or a streamed array is refused; python asdf's per-array
    storage settings (``set_array_storage``, ``set_array_compression``) are not seen:
    ``compression`` and ``inline_threshold`` apply to every array."""
    if not isinstance(tree, dict) or not needs_converters(tree):
        return _asdf_rs.write(path, tree, **kwargs)
    native, exts, version = to_native_tree(
        tree,
        kwargs.get("standard"),
        validate=kwargs.get("validate", True),
        extensions=kwargs.get("extensions"),
    )
    if kwargs.get("standard") is None:
        kwargs["standard"] = version
    kwargs["extensions"] = exts
    return _asdf_rs.write(path, native, **kwargs)
