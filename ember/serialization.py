"""``ember.save`` / ``ember.load``: tensors, parameters, state dicts and plain containers in
a file that cannot run code when loaded.

``save`` writes PyTorch's checkpoint format (``ember/_checkpoint.py``, NOTE [torch checkpoint
format]), or safetensors for a ``.safetensors`` path (``ember.utils.safetensors``). ``load``
reads both, and ember's earlier format below, which ``save`` no longer writes.

# NOTE [save format]
ember's earlier format: a zip archive (stored, not compressed) holding:

- ``ember.json``: ``{"format": "ember.save", "version": 1, "tensors": N, "root": <node>}``
- ``tensors/<i>.npy`` for ``i`` in ``range(N)``: each tensor's values, written by
  ``np.save(allow_pickle=False)`` as a compact C-ordered array (views are saved as copies).

A node is a JSON ``null``, boolean, integer, string or finite float, or an object whose
``"$"`` names one of a closed set of kinds: ``list``, ``tuple``, ``dict``, ``odict`` (entries
``[[key_node, value_node], ...]``, so keys may be ints or tuples), ``float`` (``"nan"``,
``"inf"``, ``"-inf"``), ``complex``, ``dtype``, ``device``, ``size`` and ``tensor``
(``{"id", "dtype", "shape", "requires_grad", "parameter"}``). The same tensor object saved
twice is stored once and loads as one object.

Loading reads JSON and ``np.load(allow_pickle=False)`` only: nothing in the file can name a
class or a function to call, and anything outside the schema above (a pickle, an unknown
kind, a mismatched dtype or shape, a missing array) raises ``RuntimeError`` naming the entry.
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

import ember
from ember._checkpoint import archive_name, is_torch_checkpoint, load_checkpoint, save_checkpoint
from ember._tensor import Size, Tensor
from ember.device import device as _device
from ember.dtypes import KNOWN_DTYPES
from ember.dtypes import dtype as _dtype
from ember.nn.parameter import Parameter
from ember.utils import safetensors as safetensors_format

__all__ = ["load", "save"]

_FORMAT = "ember.save"
_VERSION = 1
_MANIFEST = "ember.json"
_DTYPES = {d.name: d for d in KNOWN_DTYPES}
_MAX_DEPTH = 200

FileLike = str | os.PathLike[str] | IO[bytes]


# --------------------------------------------------------------------------- save


class _Writer:
    """Turns an object into a JSON node, collecting tensor arrays along the way."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self._ids: dict[int, int] = {}
        self._keep: list[Tensor] = []  # keeps ids stable while saving

    def node(self, obj: Any, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise RuntimeError(f"ember.save: nesting deeper than {_MAX_DEPTH} levels")
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"$": "float", "value": repr(obj)}
        if isinstance(obj, complex):
            return {"$": "complex", "real": self.node(obj.real), "imag": self.node(obj.imag)}
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if isinstance(obj, _dtype):
            return {"$": "dtype", "name": obj.name}
        if isinstance(obj, _device):
            return {"$": "device", "type": obj.type, "index": obj.index}
        if isinstance(obj, Size):
            return {"$": "size", "items": [int(s) for s in obj]}
        if isinstance(obj, (dict, OrderedDict)):
            kind = "odict" if isinstance(obj, OrderedDict) else "dict"
            items = [[self.node(k, depth + 1), self.node(v, depth + 1)] for k, v in obj.items()]
            return {"$": kind, "items": items}
        if isinstance(obj, (list, tuple)) and (type(obj) in (list, tuple)):
            kind = "list" if isinstance(obj, list) else "tuple"
            return {"$": kind, "items": [self.node(v, depth + 1) for v in obj]}
        if isinstance(obj, (np.integer, np.floating, np.bool_)):
            return self.node(obj.item(), depth)
        raise TypeError(
            f"ember.save: cannot save an object of type {type(obj).__module__}."
            f"{type(obj).__qualname__}; it saves tensors, parameters, dtypes, devices, numbers, "
            "strings, None, and dicts/lists/tuples of them (save a model's state_dict(), not "
            "the model)"
        )

    def tensor(self, t: Tensor) -> dict[str, Any]:
        index = self._ids.get(id(t))
        if index is None:
            if type(t._edata) is not np.ndarray:
                raise RuntimeError(
                    f"ember.save: tensor on '{t.device}' (shape {list(t.shape)}) has no data "
                    "to save; move it to the cpu device first"
                )
            index = len(self.arrays)
            self._ids[id(t)] = index
            self._keep.append(t)
            self.arrays.append(np.asarray(t._edata, order="C"))  # views: compact copies
        return {
            "$": "tensor",
            "id": index,
            "dtype": t.dtype.name,
            "shape": list(t.shape),
            "requires_grad": bool(t.requires_grad),
            "parameter": isinstance(t, Parameter),
        }


def save(
    obj: Any,
    f: FileLike,
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
) -> None:
    """Write ``obj`` (tensors, a ``state_dict``, an optimizer's, or dicts/lists/tuples of
    tensors, numbers, strings, dtypes) to a path or a writable binary file, in PyTorch's
    checkpoint format: ``torch.load(path, weights_only=True)`` reads it (NOTE [torch
    checkpoint format]); a path ending in ``.safetensors`` writes that format instead.

    >>> import io
    >>> buf = io.BytesIO(); ember.save({"w": ember.ones(2)}, buf)
    >>> _ = buf.seek(0); ember.load(buf)
    {'w': tensor([1., 1.])}
    """
    if pickle_module is not None or not _use_new_zipfile_serialization:
        raise TypeError(
            "ember.save writes PyTorch's zip checkpoint format only; pickle_module and "
            "_use_new_zipfile_serialization=False are not supported"
        )
    if _is_safetensors(f):
        safetensors_format.save_file(obj, f)  # type: ignore[arg-type]
        return
    with _open(f, "wb") as stream:
        save_checkpoint(obj, stream, archive_name(f))


def _save_ember_format(obj: Any, f: FileLike) -> None:
    """Write ``obj`` in ember's own earlier format (NOTE [save format]), which ``load``
    still reads; kept so the tests can make such files."""
    writer = _Writer()
    root = writer.node(obj)
    manifest = {"format": _FORMAT, "version": _VERSION, "tensors": len(writer.arrays), "root": root}
    with _open(f, "wb") as stream, zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(_MANIFEST, json.dumps(manifest, allow_nan=False))
        for i, arr in enumerate(writer.arrays):
            buf = io.BytesIO()
            if arr.dtype.kind == "V":  # bfloat16 (ml_dtypes): .npy keeps only its bits
                arr = arr.view(np.uint16)
            np.save(buf, arr, allow_pickle=False)
            zf.writestr(f"tensors/{i}.npy", buf.getvalue())


def _is_safetensors(f: FileLike) -> bool:
    return isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors")


# --------------------------------------------------------------------------- load


class _Reader:
    """Builds objects back from JSON nodes, accepting only the kinds of NOTE [save format]."""

    def __init__(self, zf: zipfile.ZipFile, count: int, map_location: Any) -> None:
        self._zf = zf
        self._count = count
        self._tensors: dict[int, Tensor] = {}
        self._device = None if map_location is None else _device(map_location)

    def node(self, n: Any, where: str, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise _bad(where, f"nesting deeper than {_MAX_DEPTH} levels")
        if n is None or isinstance(n, (bool, str, int)):
            return n
        if isinstance(n, float):
            if not math.isfinite(n):
                raise _bad(where, "non-finite float outside a 'float' node")
            return n
        if not isinstance(n, dict) or not isinstance(n.get("$"), str):
            raise _bad(where, f"expected a value or an object with a '$' kind, got {_brief(n)}")
        kind = n["$"]
        if kind in ("list", "tuple"):
            items = _field(n, "items", list, where)
            out = [self.node(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(items)]
            return out if kind == "list" else tuple(out)
        if kind in ("dict", "odict"):
            result: dict[Any, Any] = {} if kind == "dict" else OrderedDict()
            for i, pair in enumerate(_field(n, "items", list, where)):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise _bad(f"{where}.items[{i}]", "expected a [key, value] pair")
                key = self.node(pair[0], f"{where}.items[{i}].key", depth + 1)
                try:
                    hash(key)
                except TypeError:
                    raise _bad(f"{where}.items[{i}]", f"unhashable key {_brief(key)}") from None
                result[key] = self.node(pair[1], f"{where}[{key!r}]", depth + 1)
            return result
        if kind == "float":
            value = _field(n, "value", str, where)
            if value not in ("nan", "inf", "-inf"):
                raise _bad(where, f"float value must be 'nan', 'inf' or '-inf', got {value!r}")
            return float(value)
        if kind == "complex":
            re_ = self.node(n.get("real"), where, depth + 1)
            im_ = self.node(n.get("imag"), where, depth + 1)
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (re_, im_)):
                raise _bad(where, "complex parts must be numbers")
            return complex(re_, im_)
        if kind == "dtype":
            return _dtype_named(_field(n, "name", str, where), where)
        if kind == "device":
            dtype_ = _field(n, "type", str, where)
            index = n.get("index")
            if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
                raise _bad(where, "device index must be an int or null")
            try:
                return _device(dtype_, index)
            except (RuntimeError, TypeError, ValueError) as e:
                raise _bad(where, str(e)) from None
        if kind == "size":
            items = _field(n, "items", list, where)
            if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in items):
                raise _bad(where, "size entries must be non-negative ints")
            return Size(items)
        if kind == "tensor":
            return self.tensor(n, where)
        raise _bad(where, f"unknown kind {kind!r} (ember.load builds no other objects)")

    def tensor(self, n: dict[str, Any], where: str) -> Tensor:
        index = _field(n, "id", int, where)
        if isinstance(index, bool) or not 0 <= index < self._count:
            raise _bad(where, f"tensor id {index!r} is not in range(0, {self._count})")
        cached = self._tensors.get(index)
        if cached is not None:
            return cached
        dt = _dtype_named(_field(n, "dtype", str, where), where)
        shape = _field(n, "shape", list, where)
        requires_grad = _field(n, "requires_grad", bool, where)
        is_param = _field(n, "parameter", bool, where)
        name = f"tensors/{index}.npy"
        try:
            with self._zf.open(name) as member:
                arr = np.load(io.BytesIO(member.read()), allow_pickle=False)
        except KeyError:
            raise _bad(where, f"array {name} is missing from the archive") from None
        except (ValueError, OSError, EOFError) as e:
            raise _bad(where, f"array {name} is not a plain .npy array ({e})") from None
        if dt.np.kind == "V" and isinstance(arr, np.ndarray) and arr.dtype == np.uint16:
            arr = arr.view(dt.np)  # bfloat16, saved as its bits
        if not isinstance(arr, np.ndarray) or arr.dtype != dt.np or list(arr.shape) != shape:
            found = f"{getattr(arr, 'dtype', type(arr).__name__)} {list(getattr(arr, 'shape', ()))}"
            raise _bad(where, f"array {name} is {found}, but the entry says {dt.name} {shape}")
        t = ember.from_numpy(np.asarray(arr, order="C"))
        if self._device is not None and self._device.type != "cpu":
            t = t.to(device=self._device)  # type: ignore[attr-defined]
        if is_param:
            t = Parameter(t, requires_grad=requires_grad)
        elif requires_grad:
            t.requires_grad_(True)
        self._tensors[index] = t
        return t


def _bad(where: str, why: str) -> RuntimeError:
    return RuntimeError(f"ember.load: malformed entry at {where}: {why}")


def _brief(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _field(n: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = n.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _bad(where, f"field {key!r} must be {kind.__name__}, got {_brief(value)}")
    return value


def _dtype_named(name: str, where: str) -> _dtype:
    found = _DTYPES.get(name)
    if found is None:
        raise _bad(where, f"unknown dtype {name!r}")
    return found


def load(
    f: FileLike,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
) -> Any:
    """Read a checkpoint written by ``torch.save`` or ``ember.save`` (or ember's earlier
    format, or safetensors for a ``.safetensors`` path) from a path or a readable binary
    file, with ``torch.load(weights_only=True)``'s rules: nothing in the file runs (NOTE
    [torch checkpoint format]). ``weights_only`` is accepted: loading is always that safe.
    ``map_location``: ``"cpu"`` or ``"meta"`` (or a device, or a dict from saved locations).
    ``mmap=True`` (a path only): the tensors of a PyTorch-format checkpoint are
    memory-mapped from the file copy-on-write, as PyTorch's are, not read into memory.

    >>> import io
    >>> buf = io.BytesIO(); ember.save([1, (2.5, "a")], buf); _ = buf.seek(0)
    >>> ember.load(buf)
    [1, (2.5, 'a')]
    """
    if pickle_module is not None:
        raise TypeError("ember.load: pickle_module is not supported; loading never unpickles")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("ember.load: f must be a file path in order to use the mmap argument")
    if _is_safetensors(f):
        return safetensors_format.load_file(f)  # type: ignore[arg-type]
    with _open(f, "rb") as stream:
        try:
            zf = zipfile.ZipFile(stream)
        except (zipfile.BadZipFile, EOFError, OSError):
            raise RuntimeError(
                "ember.load: the file is neither a checkpoint written by torch.save or "
                "ember.save (a zip archive) nor ember's earlier format; it may be truncated "
                "or corrupted, or written by PyTorch's legacy (pre-1.6) serialization, which "
                "ember does not read: re-save it with a newer PyTorch"
            ) from None
        with zf:
            names = zf.namelist()
            if is_torch_checkpoint(names):
                mapped = os.fspath(f) if mmap else None  # type: ignore[arg-type]
                return load_checkpoint(zf, map_location, mapped)
            try:
                manifest = json.loads(zf.read(_MANIFEST).decode("utf-8"))
            except KeyError:
                raise RuntimeError(
                    f"ember.load: the archive is neither a torch.save checkpoint (no "
                    f"<name>/data.pkl) nor an ember file (no {_MANIFEST})"
                ) from None
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
                raise RuntimeError(f"ember.load: {_MANIFEST} is not valid JSON ({e})") from None
            if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
                raise RuntimeError(f"ember.load: {_MANIFEST} does not describe an ember.save file")
            if manifest.get("version") != _VERSION:
                raise RuntimeError(
                    f"ember.load: unsupported format version {manifest.get('version')!r} "
                    f"(this ember reads version {_VERSION})"
                )
            count = _field(manifest, "tensors", int, "manifest")
            return _Reader(zf, count, map_location).node(manifest.get("root"), "root")


class _open:
    """Open ``f`` if it is a path (and close it after); pass a file object through."""

    def __init__(self, f: FileLike, mode: str) -> None:
        self._owned = isinstance(f, (str, os.PathLike))
        self._f: Any = open(f, mode) if self._owned else f  # noqa: SIM115
        if not self._owned and not hasattr(self._f, "read" if "r" in mode else "write"):
            raise TypeError(
                f"expected a path or a binary file object opened for "
                f"{'reading' if 'r' in mode else 'writing'}, got {type(f).__name__}"
            )

    def __enter__(self) -> Any:
        return self._f

    def __exit__(self, *exc: Any) -> None:
        if self._owned:
            self._f.close()
