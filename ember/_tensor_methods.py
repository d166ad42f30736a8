"""Tensor methods and properties PyTorch binds by hand rather than generating from a schema:
``unique`` and ``unique_consecutive`` (Python in ``torch/_tensor.py``), ``new_tensor``,
``get_device``, ``nbytes``, ``itemsize``, ``is_set_to``, and the per-element
``apply_``/``map_``. Those that make tensors call ops, so ``__torch_dispatch__`` code sees
what it sees on PyTorch; ``overrides.guard_tensor_members`` puts each behind
``__torch_function__`` (``unique`` and ``unique_consecutive`` by the Python route, as in
PyTorch). ``ember/__init__.py`` imports this module once, after the generated bindings.
(``cuda`` and ``is_cuda`` are in ``ember/_conversions.py``, with the other device moves.)

# NOTE [apply_ and map_]
PyTorch's ``apply_``/``map_`` call a Python function per element, on CPU tensors only, and
refuse tensors that require grad. They write without bumping the version counter, so a
tensor saved for backward and then changed by them gives a wrong gradient silently; ember's
bump it, so that backward raises "modified by an inplace operation" instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import _torch_functional as F
from ember._factory import tensor as _tensor
from ember._tensor import Tensor
from ember.ops.registry import ops

aten = ops.aten


def _unique(
    self: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """``ember.unique(self, ...)``.

    >>> ember.tensor([2, 1, 2]).unique()
    tensor([1, 2])
    """
    return F.unique(self, sorted, return_inverse, return_counts, dim)


def _unique_consecutive(
    self: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Any:
    """``ember.unique_consecutive(self, ...)``.

    >>> ember.tensor([2, 2, 1, 2]).unique_consecutive()
    tensor([2, 1, 2])
    """
    return F.unique_consecutive(self, return_inverse, return_counts, dim)


def _new_tensor(
    self: Tensor,
    data: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """A new tensor holding a copy of ``data``, with ``self``'s dtype and device unless
    given (a tensor ``data`` is copied and detached, with PyTorch's warning).

    >>> ember.ones(2).new_tensor([1, 2])
    tensor([1., 2.])
    """
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone().requires_grad_(True), "
            "rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        out = aten._to_copy.default(data.detach(), dtype=dtype, device=device)
    else:
        out = _tensor(data, dtype=dtype, device=device)
    return out.requires_grad_(True) if requires_grad else out


def _get_device(self: Tensor) -> int:
    """The device index of a CUDA tensor; -1 for every device ember has, as PyTorch gives
    for the cpu.

    >>> ember.ones(1).get_device()
    -1
    """
    data = self._edata
    if type(data) is not np.ndarray and getattr(
        data, "custom_device", False
    ):  # NOTE [custom metadata]
        data.ask_device(self)
    return -1


def _nbytes(self: Tensor) -> int:
    """Bytes of the elements the tensor views (``numel() * itemsize``).

    >>> ember.ones(2, 3).nbytes
    24
    """
    return self.numel() * self.element_size()


def _itemsize(self: Tensor) -> int:
    """Bytes of one element.

    >>> ember.ones(1, dtype=ember.complex128).itemsize
    16
    """
    return self.element_size()


def _is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors view the same memory the same way: one storage, the same offset,
    sizes and strides (PyTorch's ``is_set_to``).

    >>> x = ember.zeros(4)
    >>> x.is_set_to(x.view(4)), x.is_set_to(x[1:])
    (True, False)
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"is_set_to(): argument 'tensor' must be Tensor, not {type(tensor).__name__}"
        )
    return (
        self.untyped_storage() is tensor.untyped_storage()  # type: ignore[attr-defined]
        and self.storage_offset() == tensor.storage_offset()
        and tuple(self.shape) == tuple(tensor.shape)
        and tuple(self.stride()) == tuple(tensor.stride())
    )


def _per_element(self: Tensor, op: str) -> np.ndarray | None:
    """The array ``apply_``/``map_`` write into; None for a meta tensor (nothing to do)."""
    if self.requires_grad:
        raise RuntimeError(
            f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead."
        )
    if self.device.type == "meta":
        return None
    if self.device.type != "cpu":
        raise TypeError(f"{op} is only implemented on CPU tensors (got one on {self.device})")
    return self._edata


def _apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Replace each element ``x`` by ``callable(x)``, a Python call per element (CPU only;
    NOTE [apply_ and map_]); returns ``self``.

    >>> ember.tensor([1.0, 2.0]).apply_(lambda v: v * 10)
    tensor([10., 20.])
    """
    arr = _per_element(self, "apply_")
    if arr is None:
        return self
    kind = _python_kind(arr)
    with np.nditer(arr, flags=["refs_ok", "zerosize_ok"], op_flags=[["readwrite"]]) as it:
        for x in it:
            x[...] = _checked(callable(kind(x.item())), kind)
    self._bump_version()
    return self


def _map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """Replace each element ``x`` by ``callable(x, y)``, ``y`` the matching element of
    ``tensor`` broadcast to ``self`` (CPU only; NOTE [apply_ and map_]); returns ``self``.

    >>> ember.tensor([1.0, 2.0]).map_(ember.tensor([3.0, 4.0]), lambda a, b: a + b)
    tensor([4., 6.])
    """
    if not isinstance(tensor, Tensor) or tensor.dtype is not self.dtype:
        got = tensor.dtype if isinstance(tensor, Tensor) else type(tensor).__name__
        raise TypeError(f"map_: expected a tensor of {self.dtype} for 'other' (got {got})")
    if tensor.requires_grad:
        raise RuntimeError(
            "Can't call map_() on Variable that requires grad. Use var.detach().map_() instead."
        )
    arr = _per_element(self, "map_")
    if arr is None:
        return self
    other = aten.expand.default(tensor, list(self.shape))._edata
    kind = _python_kind(arr)
    with np.nditer([arr, other], flags=["refs_ok", "zerosize_ok"],
                   op_flags=[["readwrite"], ["readonly"]]) as it:  # fmt: skip
        for x, y in it:
            x[...] = _checked(callable(kind(x.item()), kind(y.item())), kind)
    self._bump_version()
    return self


def _python_kind(arr: np.ndarray) -> type:
    """The Python type elements are handed to the callable as (PyTorch's conversion)."""
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[arr.dtype.kind]


def _lu(self: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:
    """``ember.lu(self, pivot, get_infos)`` (NOTE [LU factors]).

    >>> ember.tensor([[2.0, 1.0], [4.0, 3.0]]).lu()[1]
    tensor([2, 2], dtype=ember.int32)
    """
    return F.lu(self, pivot, get_infos)


def _stft(
    self: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """``ember.stft(self, ...)`` (NOTE [stft]).

    >>> ember.ones(16).stft(8, window=ember.hann_window(8), return_complex=True).shape
    ember.Size([5, 9])
    """
    return F.stft(
        self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
        return_complex, align_to_window,
    )  # fmt: skip


def _checked(value: Any, kind: type) -> Any:
    """The callable's result, which must be a number the tensor can take."""
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return value
    raise TypeError(f"must be real number, not {type(value).__name__}")


def install() -> None:
    """Attach the members to ``Tensor`` (once, before ``guard_tensor_members``)."""
    methods: dict[str, Callable[..., Any]] = {
        "unique": _unique,
        "unique_consecutive": _unique_consecutive,
        "lu": _lu,
        "stft": _stft,
        "new_tensor": _new_tensor,
        "get_device": _get_device,
        "apply_": _apply_,
        "map_": _map_,
        "is_set_to": _is_set_to,
    }
    for name, fn in methods.items():
        fn.__name__ = fn.__qualname__ = name
        setattr(Tensor, name, fn)
    for name, fn in (("nbytes", _nbytes), ("itemsize", _itemsize)):
        setattr(Tensor, name, property(fn, doc=fn.__doc__))


install()
