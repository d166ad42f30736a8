"""safetensors files, the format model hubs ship weights in, through the ``safetensors``
package's NumPy API (``pip install 'ember[safetensors]'``; bfloat16 through ``ml_dtypes``):
``save_file``/``load_file``/``save``/``load`` as ``safetensors.torch`` offers them.
``ember.save``/``ember.load`` use them for a path ending in ``.safetensors``.

>>> from ember.utils.safetensors import load, save
>>> load(save({"w": ember.ones(2)}))
{'w': tensor([1., 1.])}
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ember._factory import from_numpy
from ember._tensor import Tensor, root_array

__all__ = ["load", "load_file", "save", "save_file"]

Path = str | os.PathLike[str]


def _package() -> Any:
    """The ``safetensors`` package with its NumPy API loaded, or a clear error naming the
    fix (an optional extra, so imported on first use)."""
    try:  # optional dependency, loaded when first needed
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ModuleNotFoundError(
            "safetensors files need the safetensors package: pip install 'ember[safetensors]'"
        ) from None
    return safetensors


def _arrays(tensors: Any) -> dict[str, np.ndarray]:
    """The tensors' values as contiguous arrays, refusing shared memory as safetensors'
    own ``save_file`` does (a file holds each tensor's bytes once, unshared)."""
    if not isinstance(tensors, dict) or not all(
        isinstance(k, str) and isinstance(v, Tensor) for k, v in tensors.items()
    ):
        raise TypeError("safetensors: expected a dict from str names to tensors (a state_dict)")
    owners: dict[int, str] = {}
    out: dict[str, np.ndarray] = {}
    for name, t in tensors.items():
        t = t.detach()
        if t.device.type == "lazy":
            t = t.to("cpu")
        data = t._edata
        if type(data) is not np.ndarray:
            raise RuntimeError(
                f"safetensors: {name!r} is a {t.device.type} tensor with no values to save"
            )
        root = id(root_array(data))
        if root in owners and data.size:
            raise RuntimeError(
                f"safetensors: {owners[root]!r} and {name!r} share memory, which a safetensors "
                "file cannot hold; save a clone of one of them (safetensors.torch refuses "
                "this too)"
            )
        owners[root] = name
        out[name] = np.ascontiguousarray(data)
    return out


def _tensors(arrays: dict[str, np.ndarray]) -> dict[str, Tensor]:
    """Tensors of the package's arrays (copied once where the package gives read-only
    memory, such as a memory-mapped file's, so in-place ops work)."""
    return {
        k: from_numpy(a if a.flags.writeable else np.array(a, copy=True)) for k, a in arrays.items()
    }


def save_file(
    tensors: dict[str, Tensor], filename: Path, metadata: dict[str, str] | None = None
) -> None:
    """Write ``tensors`` (str names to tensors) to a safetensors file.

    >>> import os, tempfile
    >>> from ember.utils.safetensors import load_file, save_file
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> save_file({"b": ember.zeros(2, dtype=ember.int64)}, path); load_file(path)
    {'b': tensor([0, 0])}
    """
    _package().numpy.save_file(_arrays(tensors), filename, metadata=metadata)


def load_file(filename: Path, device: str = "cpu") -> dict[str, Tensor]:
    """The tensors of a safetensors file (the package maps it into memory)."""
    if device != "cpu":
        raise RuntimeError(f"safetensors: ember loads to the cpu device, not {device!r}")
    out: dict[str, np.ndarray] = {}
    with _package().safe_open(filename, framework="np") as f:
        for name in f.keys():  # noqa: SIM118 - safe_open has keys(), not iteration
            dtype = f.get_slice(name).get_dtype()
            out[name] = _bf16(f.get_tensor(name)) if dtype == "BF16" else f.get_tensor(name)
    return _tensors(out)


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``tensors``."""
    return bytes(_package().numpy.save(_arrays(tensors), metadata=metadata))


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors of a safetensors file's bytes (bfloat16 ones: use ``load_file``)."""
    return _tensors(dict(_package().numpy.load(data)))


def _bf16(arr: np.ndarray) -> np.ndarray:
    """A BF16 tensor as ``ml_dtypes.bfloat16`` (the package gives its 16-bit patterns)."""
    try:
        import ml_dtypes  # the bf16 extra, imported when a file holds bfloat16
    except ImportError:
        raise ModuleNotFoundError(
            "safetensors: a bfloat16 tensor needs ml_dtypes: pip install 'ember[bf16]'"
        ) from None
    return arr if arr.dtype == ml_dtypes.bfloat16 else arr.view(ml_dtypes.bfloat16)
