"""PyTorch's checkpoint format, ``torch.save``'s zip archive: read with ``weights_only``'s
rules, and written so that ``torch.load(path, weights_only=True)`` reads it.

# NOTE [torch checkpoint format]
A zip archive (entries stored, not compressed) whose entries share one top folder:

- ``data.pkl``: a protocol-2 pickle of the object. A tensor is the call
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
  (``_rebuild_tensor_v3`` adds the dtype, for storages without a typed class), a parameter
  ``torch._utils._rebuild_parameter(tensor, requires_grad, hooks)``, and ``storage`` a
  persistent id ``("storage", torch.<Kind>Storage, key, location, numel)``;
- ``data/<key>``: each storage's bytes, little-endian, aligned to 64 bytes in the file;
- ``version``, ``byteorder``, ``.format_version``, ``.storage_alignment`` and
  ``.data/serialization_id``, as PyTorch writes them.

Tensors sharing memory share one storage record (views, tied weights), so they load sharing
memory again; a storage is saved whole, as PyTorch's is.

Reading runs nothing a file names: ``find_class`` answers from a closed table (the rebuild
functions, written here; the storage classes; ``collections.OrderedDict``; torch's dtypes,
``torch.Size`` and ``torch.device``; ``_codecs.encode``, which protocol 2 uses for bytes),
BUILD is taken only to set an ``OrderedDict``'s ``_metadata`` (what a ``state_dict``
carries), and a tensor must lie inside its storage. Anything else raises ``RuntimeError``
naming the global or the entry before anything runs.
"""

from __future__ import annotations

import codecs
import io
import os
import pickle
import struct
import sys
import uuid
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from ember import dtypes
from ember._factory import from_numpy
from ember._tensor import Size, Tensor, root_array
from ember.device import device as _device
from ember.nn.parameter import Parameter
from ember.ops.registry import ops

__all__ = ["is_torch_checkpoint", "load_checkpoint", "save_checkpoint"]

#: torch's typed storage classes, by the dtype name they hold
_STORAGE_OF = {
    "float32": "FloatStorage",
    "float64": "DoubleStorage",
    "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage",
    "int64": "LongStorage",
    "int32": "IntStorage",
    "int16": "ShortStorage",
    "int8": "CharStorage",
    "uint8": "ByteStorage",
    "bool": "BoolStorage",
    "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_ALIGNMENT = 64


_BY_NAME = {d.name: d for d in dtypes.KNOWN_DTYPES}


def _ember_dtype(name: str) -> dtypes.dtype | None:
    """The ember dtype of that name (None for one ember lacks: bfloat16 without ml_dtypes)."""
    return _BY_NAME.get(name)


class _Global:
    """A name in another package (``torch.FloatStorage``), pickled as a GLOBAL without
    importing it; reading maps it back (an instance, never a callable)."""

    def __init__(self, module: str, name: str, dtype: dtypes.dtype | None = None) -> None:
        self.module, self.name, self.dtype = module, name, dtype

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"

    def __call__(self, *args: Any) -> Any:
        # callable only so pickle's writer takes it as a REDUCE's function; a file that
        # calls a storage class or a dtype is refused
        raise _bad(f"the checkpoint calls {self!r}, which weights_only loading does not allow")


_GLOBALS: dict[tuple[str, str], _Global] = {}


def _global(module: str, name: str) -> _Global:
    """One ``_Global`` per name, so the pickle memo writes each GLOBAL once."""
    found = _GLOBALS.get((module, name))
    if found is None:
        found = _GLOBALS[(module, name)] = _Global(module, name)
    return found


class _StorageRef:
    """A storage being written: its bytes as a flat array, its record key, its dtype."""

    def __init__(self, flat: np.ndarray, key: str, dtype: dtypes.dtype) -> None:
        self.flat, self.key, self.dtype = flat, key, dtype


class _Storage:
    """A storage being read: a flat array of its dtype (bytes for an untyped storage)."""

    def __init__(self, flat: np.ndarray | None, numel: int, dtype: dtypes.dtype | None) -> None:
        self.flat, self.numel, self.dtype = flat, numel, dtype


# --------------------------------------------------------------------------- reading


def _bad(why: str) -> RuntimeError:
    return RuntimeError(f"ember.load: {why}")


def _int_tuple(x: Any, what: str) -> tuple[int, ...]:
    if not isinstance(x, tuple) or not all(type(v) is int for v in x):
        raise _bad(f"a tensor's {what} must be a tuple of ints, got {x!r}")
    return x


def _tensor_from(
    storage: Any, offset: Any, size: Any, stride: Any, dtype: dtypes.dtype | None
) -> Tensor:
    """A tensor over ``storage``'s memory, checked to lie inside it."""
    if not isinstance(storage, _Storage):
        raise _bad(f"a tensor's storage must be a storage record, got {type(storage).__name__}")
    size, stride = _int_tuple(size, "size"), _int_tuple(stride, "stride")
    if type(offset) is not int or offset < 0 or len(size) != len(stride):
        raise _bad(f"bad tensor geometry: offset {offset!r}, size {size}, stride {stride}")
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise _bad(f"bad tensor geometry: size {size}, stride {stride}")
    if dtype is None:
        raise _bad("a tensor's storage has no dtype")
    if storage.flat is None:  # map_location="meta": the geometry only
        return ops.aten.empty_strided.default(size, stride, dtype=dtype, device="meta")
    flat = storage.flat
    if storage.dtype is None:  # untyped: bytes, viewed as the tensor's dtype
        if flat.size % dtype.np.itemsize:
            raise _bad(f"an untyped storage of {flat.size} bytes does not hold {dtype.name}s")
        flat = flat.view(dtype.np)
    elif storage.dtype is not dtype:
        flat = flat.view(dtype.np)
    numel = int(np.prod(size))
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) if numel else 0
    if numel and last >= flat.size:
        raise _bad(
            f"a tensor of size {size}, stride {stride} at offset {offset} reaches element "
            f"{last} of a storage of {flat.size}; the file is corrupted"
        )
    item = flat.itemsize
    arr = np.lib.stride_tricks.as_strided(
        flat[offset:] if numel else flat[:0],
        shape=size,
        strides=tuple(s * item for s in stride),
        writeable=True,
    )
    return from_numpy(arr)


def _rebuild_tensor_v2(
    storage: Any,
    offset: Any,
    size: Any,
    stride: Any,
    requires_grad: Any,
    hooks: Any,
    metadata: Any = None,
) -> Tensor:
    t = _tensor_from(storage, offset, size, stride, getattr(storage, "dtype", None))
    return t.requires_grad_(bool(requires_grad)) if requires_grad else t


def _rebuild_tensor_v3(
    storage: Any,
    offset: Any,
    size: Any,
    stride: Any,
    requires_grad: Any,
    hooks: Any,
    dtype: Any,
    metadata: Any = None,
) -> Tensor:
    if not isinstance(dtype, dtypes.dtype):
        raise _bad(f"_rebuild_tensor_v3 needs a dtype, got {dtype!r}")
    t = _tensor_from(storage, offset, size, stride, dtype)
    return t.requires_grad_(bool(requires_grad)) if requires_grad else t


def _rebuild_parameter(data: Any, requires_grad: Any, hooks: Any) -> Parameter:
    if not isinstance(data, Tensor):
        raise _bad(f"a parameter must hold a tensor, got {type(data).__name__}")
    return Parameter(data.detach(), requires_grad=bool(requires_grad))


def _rebuild_parameter_with_state(data: Any, requires_grad: Any, hooks: Any, state: Any) -> Any:
    return _rebuild_parameter(data, requires_grad, hooks)


def _size(values: Any = ()) -> Size:
    return Size(_int_tuple(tuple(values), "torch.Size"))


def _device_of(*args: Any) -> _device:
    return _device(*args)


def _encode(text: Any, encoding: Any = "latin1") -> bytes:
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise _bad("_codecs.encode is allowed only to make bytes from latin-1 text")
    return codecs.encode(text, "latin1")


_ALLOWED: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch", "Size"): _size,
    ("torch", "device"): _device_of,
    ("_codecs", "encode"): _encode,
    **{(m, "complex"): complex for m in ("builtins", "__builtin__")},
    **{(m, "set"): set for m in ("builtins", "__builtin__")},
    ("torch.storage", "UntypedStorage"): _Global("torch.storage", "UntypedStorage"),
}
for _name, _kind in _STORAGE_OF.items():
    _ALLOWED[("torch", _kind)] = _Global("torch", _kind, _ember_dtype(_name))
    if _ember_dtype(_name) is not None:
        _ALLOWED[("torch", _name)] = _ember_dtype(_name)


class _Unpickler(pickle._Unpickler):  # type: ignore[name-defined,misc]
    """The pure-Python unpickler, with globals, persistent ids and BUILD restricted (NOTE
    [torch checkpoint format])."""

    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: IO[bytes], storage: Callable[[Any], _Storage]) -> None:
        super().__init__(file)
        self._storage = storage

    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED.get((module, name))
        if found is None or (isinstance(found, _Global) and found.dtype is None and
                             found.name != "UntypedStorage"):  # fmt: skip
            raise _bad(
                f"the checkpoint names the global {module}.{name}, which weights_only loading "
                "does not allow (only tensors, parameters, dtypes, sizes, devices and plain "
                "containers); nothing in the file was run"
            )
        return found

    def persistent_load(self, pid: Any) -> Any:
        return self._storage(pid)

    def _build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is OrderedDict and isinstance(state, dict) and set(state) <= {"_metadata"}:
            for k, v in state.items():
                setattr(inst, k, v)
            return
        raise _bad(
            f"the checkpoint sets the state of a {type(inst).__name__}, which weights_only "
            "loading does not allow; nothing in the file was run"
        )

    dispatch[pickle.BUILD[0]] = _build


def is_torch_checkpoint(names: list[str]) -> bool:
    """Whether a zip archive's entry names are a ``torch.save`` checkpoint's."""
    return any(n.endswith("/data.pkl") and n.count("/") == 1 for n in names)


def _location(location: Any, map_location: Any) -> str:
    """Where a storage saved at ``location`` goes: "cpu" or "meta"."""
    if isinstance(map_location, dict):
        map_location = map_location.get(location, location)
    if map_location is None:
        map_location = location
    if callable(map_location) and not isinstance(map_location, (str, _device)):
        raise TypeError(
            "ember.load: a callable map_location is not supported; give a device or a "
            "str (e.g. map_location='cpu')"
        )
    kind = _device(map_location).type if isinstance(map_location, str | _device) else None
    if kind not in ("cpu", "meta"):
        raise RuntimeError(
            f"ember.load: the checkpoint has storages on {location!r}, which ember does not "
            "have; pass map_location='cpu' (or 'meta') to load them there"
        )
    return kind


def _read_record(zf: zipfile.ZipFile, info: zipfile.ZipInfo, out: np.ndarray) -> int:
    """Read a record's bytes into ``out``; a stored one straight from the file (one copy,
    no chunks: a checkpoint's records are stored), others through ``zipfile``."""
    fp = zf.fp
    if info.compress_type != zipfile.ZIP_STORED or fp is None or not hasattr(fp, "readinto"):
        with zf.open(info) as r:
            return int(r.readinto(memoryview(out)))  # type: ignore[attr-defined]
    fp.seek(_data_offset(zf, info))
    return int(fp.readinto(memoryview(out)))


def _data_offset(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """Where a record's bytes start in the archive's file (after its local zip header)."""
    fp = zf.fp
    assert fp is not None
    fp.seek(info.header_offset)
    header = fp.read(30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise _bad(f"record {info.filename!r} has no zip header; the file is corrupted")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return int(info.header_offset + 30 + name_len + extra_len)


def _mapped_record(path: str, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray | None:
    """A stored record's bytes mapped from ``path`` copy-on-write (writes stay in memory,
    as PyTorch's ``mmap=True`` maps them privately); None for a compressed record."""
    if info.compress_type != zipfile.ZIP_STORED:
        return None
    if info.file_size == 0:
        return np.empty(0, np.uint8)
    start = _data_offset(zf, info)
    if start + info.file_size > os.path.getsize(path):
        raise _bad(f"record {info.filename!r} is truncated; the file is corrupted")
    mapped = np.memmap(path, np.uint8, "c", start, (info.file_size,))
    return mapped.view(np.ndarray)  # a plain array over the map (which it keeps alive)


def load_checkpoint(
    zf: zipfile.ZipFile, map_location: Any = None, mmap_path: str | None = None
) -> Any:
    """The object a ``torch.save`` archive holds (NOTE [torch checkpoint format]); with
    ``mmap_path`` (the archive's file), stored records are memory-mapped, not read."""
    names = zf.namelist()
    pkl = next(n for n in names if n.endswith("/data.pkl") and n.count("/") == 1)
    prefix = pkl[: -len("data.pkl")]
    order = f"{prefix}byteorder"
    if order in names and zf.read(order).strip() not in (b"little", b""):
        raise _bad("the checkpoint was written big-endian; ember reads little-endian files")
    storages: dict[str, _Storage] = {}

    def storage(pid: Any) -> _Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise _bad(f"unexpected persistent id {pid!r}")
        _, kind, key, location, numel = pid
        if not isinstance(kind, _Global) or type(key) is not str or type(numel) is not int:
            raise _bad(f"bad storage record {pid!r}")
        if key in storages:
            return storages[key]
        where = _location(location, map_location)
        dt = kind.dtype  # None: an untyped storage, numel counts bytes
        nbytes = numel * (dt.np.itemsize if dt is not None else 1)
        if where == "meta":
            storages[key] = _Storage(None, numel, dt)
            return storages[key]
        name = f"{prefix}data/{key}"
        try:
            info = zf.getinfo(name)
        except KeyError:
            raise _bad(f"the checkpoint has no record {name!r}; the file is corrupted") from None
        if info.file_size != nbytes:
            raise _bad(
                f"record {name!r} holds {info.file_size} bytes, the storage needs {nbytes}; "
                "the file is corrupted"
            )
        mapped = _mapped_record(mmap_path, zf, info) if mmap_path is not None else None
        if mapped is not None:
            raw = mapped
        else:
            raw = np.empty(nbytes, np.uint8)
            got = _read_record(zf, info, raw)
            if got != nbytes:
                raise _bad(f"record {name!r} is truncated; the file is corrupted")
        storages[key] = _Storage(raw if dt is None else raw.view(dt.np), numel, dt)
        return storages[key]

    if map_location is not None:
        _location("cpu", map_location)  # a map_location of the wrong kind fails here, first
    try:
        data = zf.read(pkl)
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise _bad(f"{pkl!r} can't be read ({e}); the file is corrupted") from None
    try:
        return _Unpickler(io.BytesIO(data), storage).load()
    except RuntimeError:
        raise
    except (pickle.UnpicklingError, EOFError, TypeError, ValueError, IndexError,
            KeyError, AttributeError, struct.error) as e:  # fmt: skip
        raise _bad(f"data.pkl is not a checkpoint this loader reads ({e!r})") from None


# --------------------------------------------------------------------------- writing


class _Pickler(pickle._Pickler):  # type: ignore[name-defined,misc]
    """The pure-Python pickler, writing tensors as PyTorch's rebuild calls (NOTE [torch
    checkpoint format]) and refusing objects ``torch.load(weights_only=True)`` would."""

    dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: IO[bytes]) -> None:
        super().__init__(file, protocol=2)
        self.storages: dict[int, _StorageRef] = {}

    def _save_global_name(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = _save_global_name

    def _save_dtype(self, obj: dtypes.dtype) -> None:
        self.write(pickle.GLOBAL + f"torch\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[dtypes.dtype] = _save_dtype

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is _StorageRef:
            kind = _STORAGE_OF[obj.dtype.name]
            return ("storage", _global("torch", kind), obj.key, "cpu", obj.flat.size)
        return None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, Size):
            return (_global("torch", "Size"), (tuple(obj),))
        if isinstance(obj, _device):
            return (_global("torch", "device"), (str(obj),))
        if (
            type(obj) in _PLAIN
            or type(obj) in (OrderedDict, _Global)
            or isinstance(obj, dtypes.dtype)
            or obj in (OrderedDict, complex, set)
            or obj is codecs.encode  # how protocol 2 writes bytes
        ):
            return NotImplemented
        if hasattr(obj, "state_dict") and hasattr(obj, "parameters"):
            raise TypeError(
                f"ember.save: cannot save a {type(obj).__name__} module itself; save its "
                "state_dict() and load it into a new module with load_state_dict"
            )
        raise TypeError(
            f"ember.save: cannot save an object of type {type(obj).__name__}: a checkpoint "
            "holds tensors, parameters, dtypes, sizes, devices, numbers, strings and "
            "dicts/lists/tuples of them (what torch.load(weights_only=True) reads)"
        )

    def _tensor(self, t: Tensor) -> Any:
        if isinstance(t, Parameter):
            plain = t.detach()
            return (
                _global("torch._utils", "_rebuild_parameter"),
                (plain, bool(t.requires_grad), OrderedDict()),
            )
        if t.dtype.name not in _STORAGE_OF:
            raise RuntimeError(f"ember.save: tensors of dtype {t.dtype} cannot be saved")
        if t.device.type == "lazy":
            t = t.to("cpu")
        if t.is_sparse:
            raise RuntimeError(
                "ember.save: sparse COO tensors cannot be saved yet; save t.to_dense(), or "
                "t._indices() and t._values()"
            )
        data = t.detach()._edata
        if type(data) is not np.ndarray:
            raise RuntimeError(
                f"ember.save: a {t.device.type} tensor has no data to save; move it to the "
                "cpu first"
            )
        root = root_array(data)
        item = data.itemsize
        inside = (
            root.dtype == data.dtype
            and root.flags.c_contiguous
            and data.size
            and all(s >= 0 for s in data.strides)
        )
        if inside:
            start = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            offset, strides = start // item, tuple(s // item for s in data.strides)
            ref = self.storages.get(id(root))
            if ref is None:
                ref = _StorageRef(root.reshape(-1), str(len(self.storages)), t.dtype)
                self.storages[id(root)] = ref
        else:  # memory not expressible as (storage, offset, strides): a compact copy
            flat = np.ascontiguousarray(data).reshape(-1)
            ref = _StorageRef(flat, str(len(self.storages)), t.dtype)
            self.storages[id(flat)] = ref
            offset, strides = 0, _contiguous(tuple(data.shape))
        return (
            _global("torch._utils", "_rebuild_tensor_v2"),
            (ref, offset, tuple(data.shape), strides, bool(t.requires_grad), OrderedDict()),
        )


_PLAIN = {dict, list, tuple, set, str, bytes, int, float, bool, type(None), complex}


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _aligned(zf: zipfile.ZipFile, name: str) -> zipfile.ZipInfo:
    """A stored entry whose data starts at a multiple of 64 bytes (padding in its local
    header's extra field, as PyTorch's writer pads)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = zf.fp.tell() + 30 + len(name.encode())  # type: ignore[union-attr]
    pad = (-(start + 4)) % _ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return info


def save_checkpoint(obj: Any, stream: IO[bytes], name: str = "archive") -> None:
    """Write ``obj`` to ``stream`` in PyTorch's format (NOTE [torch checkpoint format])."""
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(obj)
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        records = [
            ("data.pkl", buf.getvalue()),
            (".format_version", b"1"),
            (".storage_alignment", b"64"),
            ("byteorder", sys.byteorder.encode()),
        ]
        for rec, payload in records:
            zf.writestr(_aligned(zf, f"{name}/{rec}"), payload)
        for ref in pickler.storages.values():
            info = _aligned(zf, f"{name}/data/{ref.key}")
            with zf.open(info, "w", force_zip64=ref.flat.nbytes > 2**31) as w:
                w.write(memoryview(np.ascontiguousarray(ref.flat).view(np.uint8)))
        zf.writestr(_aligned(zf, f"{name}/version"), b"3\n")
        zf.writestr(_aligned(zf, f"{name}/.data/serialization_id"), uuid.uuid4().hex.encode())


def archive_name(f: str | os.PathLike[str] | IO[bytes]) -> str:
    """The top folder PyTorch names a checkpoint's entries with: the file's stem."""
    if isinstance(f, str | os.PathLike):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        return stem or "archive"
    return "archive"
