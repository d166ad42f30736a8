"""Fake tensors, as ``torch._subclasses.fake_tensor``: tensors with a device, shape, strides
and dtype but no data, whose ops compute only metadata, from the Meta rules every op already
has (no second shape function).

>>> from ember._subclasses.fake_tensor import FakeTensorMode
>>> with FakeTensorMode():
...     x = ember.ones(1000, 1000)
...     y = (x @ x).sum(0)
>>> type(y).__name__, y.shape, y.device
('FakeTensor', ember.Size([1000]), device(type='cpu'))

# NOTE [fake tensors]
A ``FakeTensor`` holds a ``ShapeOnlyArray`` whose device is the device it pretends to be on,
and carries the Meta and Python keys. Under ``FakeTensorMode`` every op reaches the mode at
the Python key; the mode turns real tensor arguments into fake ones (``from_tensor``), runs
the op's Meta kernel (``redispatch`` to Meta) and gives the results the arguments' device.
A FakeTensor used outside the mode enters its own mode (its ``__torch_dispatch__``). Ops
whose output shape depends on values (``nonzero``, ``item``) raise
``DynamicOutputShapeException`` / ``DataDependentOutputException``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor
from ember.device import device
from ember.dispatch import marks, state
from ember.dispatch.keys import META_BIT
from ember.dtypes import get_default_dtype
from ember.ops.registry import OpOverload, ops
from ember.utils._python_dispatch import TorchDispatchMode, is_traceable_wrapper_subclass
from ember.utils._pytree import tree_map

__all__ = [
    "is_fake",
    "unset_fake_temporarily",
    "DataDependentOutputException",
    "DynamicOutputShapeException",
    "FakeTensor",
    "FakeTensorMode",
]

_CPU = device("cpu")
_META = device("meta")


class DynamicOutputShapeException(RuntimeError):
    """An op whose output shape depends on the input's values ran on fake tensors."""

    def __init__(self, func: OpOverload) -> None:
        super().__init__(str(func))
        self.func = func


class DataDependentOutputException(RuntimeError):
    """An op whose output is a value of the input (``item``) ran on fake tensors."""

    def __init__(self, func: Any) -> None:
        super().__init__(str(func))
        self.func = func


#: ops that bring a fresh real tensor (``ember.tensor(data)``'s) into the program: a
#: constant, made fake whatever ``allow_non_fake_inputs`` says, as PyTorch's
_LIFTS = frozenset({ops.aten.lift_fresh.default, ops.aten.lift_fresh_copy.default})

#: ops that return the input's values themselves
_DATA_OUTPUTS = (
    frozenset({ops.aten._local_scalar_dense.default})
    if hasattr(ops.aten, "_local_scalar_dense")
    else frozenset()
)


class FakeTensor(Tensor):
    """A tensor with metadata and a device but no data (NOTE [fake tensors])."""

    fake_mode: FakeTensorMode

    @property
    def fake_device(self) -> device:
        return self._edata.device

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        dev = "" if self.device == _CPU else f", device='{self.device}'"
        dtype = "" if self.dtype is get_default_dtype() else f", dtype={self.dtype!r}"
        return f"FakeTensor(..., size={tuple(self.shape)}{dev}{dtype})"

    def item(self) -> Any:
        raise DataDependentOutputException("aten._local_scalar_dense.default")

    def tolist(self) -> Any:
        raise DataDependentOutputException("aten._local_scalar_dense.default")

    @classmethod
    def __torch_dispatch__(
        cls, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        if _other_subclass(types):  # another subclass's handler unwraps it first (PyTorch's)
            return NotImplemented
        # outside its mode, a fake tensor's op runs in the mode it was made in
        mode = next(x.fake_mode for x in _tensors(args, kwargs or {}) if isinstance(x, FakeTensor))
        with mode:
            return func(*args, **(kwargs or {}))


def _other_subclass(types: Any) -> bool:
    """A handler class other than FakeTensor's is among ``types`` (a wrapper subclass over
    fake tensors: its ``__torch_dispatch__`` runs first and calls the op on its parts)."""
    return any(not issubclass(t, FakeTensor) for t in types)


def _tensors(args: Any, kwargs: dict[str, Any]) -> list[Any]:
    found: list[Any] = []
    tree_map(lambda x: found.append(x) if isinstance(x, Tensor) else None, (args, kwargs))
    return found


class FakeTensorMode(TorchDispatchMode):
    """Every op in the block computes metadata only, on fake tensors (NOTE [fake tensors]).

    >>> from ember._subclasses.fake_tensor import FakeTensorMode
    >>> mode = FakeTensorMode()
    >>> f = mode.from_tensor(ember.ones(3))
    >>> with mode:
    ...     (f * 2).shape
    ember.Size([3])
    """

    def __init__(self, *, allow_non_fake_inputs: bool = True, **_: Any) -> None:
        super().__init__()
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self._memo: dict[int, tuple[Any, FakeTensor]] = {}

    def from_tensor(self, t: Tensor, **_: Any) -> FakeTensor:
        """A fake tensor with ``t``'s metadata and device (the same one for the same ``t``)."""
        if isinstance(t, FakeTensor):
            return t
        found = self._memo.get(id(t))
        if found is not None and found[0] is t:
            return found[1]
        d = t._edata
        strides = t.stride()
        arr = ShapeOnlyArray(t.shape, d.dtype, strides, t.storage_offset(), t.device)
        fake = self._make(arr)
        if t.requires_grad:
            fake.requires_grad_(True)
        self._memo[id(t)] = (t, fake)
        return fake

    from_real_tensor = from_tensor

    def _make(self, arr: ShapeOnlyArray) -> FakeTensor:
        f = object.__new__(FakeTensor)
        f._edata = arr
        marks.mark_fake(f)
        f.fake_mode = self
        return f

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        if _other_subclass(types):
            return NotImplemented
        if func in _DATA_OUTPUTS or "data_dependent_output" in func.tags:  # (equal, allclose)
            raise DataDependentOutputException(func)
        if "dynamic_output_shape" in func.tags:  # NOTE [data-dependent shapes]
            raise DynamicOutputShapeException(func)

        def to_fake(x: Any) -> Any:
            if isinstance(x, Tensor) and not isinstance(x, FakeTensor):
                if not self.allow_non_fake_inputs and func not in _LIFTS:
                    raise RuntimeError(
                        f"{func}: a real tensor entered FakeTensorMode with "
                        "allow_non_fake_inputs=False; convert it with mode.from_tensor(t)"
                    )
                return self.from_tensor(x)
            return x

        args, kwargs = tree_map(to_fake, args), tree_map(to_fake, kwargs)
        inputs = _tensors(args, kwargs)
        given = kwargs.get("device")
        if given is not None:  # the device a factory or _to_copy makes: the fake one
            dev = device(given)
            kwargs = {**kwargs, "device": _META}
        else:
            dev = next((t._edata.device for t in inputs), _CPU)
        out = func.redispatch(META_BIT, *args, **kwargs)
        ids = {id(t) for t in inputs}
        return tree_map(lambda x: self._fake_result(x, dev, ids), out)

    def _fake_result(self, x: Any, dev: device, inputs: set[int]) -> Any:
        if not isinstance(x, Tensor):
            return x
        arr = x._edata
        if arr.device != dev:
            arr.device = dev
        if id(x) in inputs:  # an in-place op's input, returned
            return x
        x.__class__ = FakeTensor
        marks.mark_python(x)
        x.fake_mode = self  # type: ignore[attr-defined]
        return x


def is_fake(x: Any) -> bool:
    """Whether ``x`` is a ``FakeTensor``, or a traceable wrapper subclass whose inner
    tensors (``__tensor_flatten__``) all are, as PyTorch's ``is_fake``.

    >>> from ember._subclasses.fake_tensor import FakeTensorMode, is_fake
    >>> is_fake(FakeTensorMode().from_tensor(ember.ones(2))), is_fake(ember.ones(2))
    (True, False)
    """
    if isinstance(x, FakeTensor):
        return True
    if is_traceable_wrapper_subclass(x):
        attrs, _ = x.__tensor_flatten__()
        return all(is_fake(getattr(x, a)) for a in attrs)
    return False


def _is_tensor_constructor(func: OpOverload) -> bool:
    """Whether ``func`` makes a tensor from no tensor (a factory: ``empty``, ``ones``...):
    no argument of a type holding a Tensor and one plain Tensor return, as PyTorch's
    (wrapper subclasses' TorchDispatchModes use it to wrap factories' results).

    >>> from ember._subclasses.fake_tensor import _is_tensor_constructor as is_factory
    >>> is_factory(ember.ops.aten.ones.default), is_factory(ember.ops.aten.add.Tensor)
    (True, False)
    """
    if not isinstance(func, OpOverload):
        raise AssertionError(f"func must be an OpOverload, got {type(func)}")
    schema = func._schema
    if any(a.type.base == "Tensor" for a in schema.arguments):
        return False
    returns = schema.returns
    return (
        len(returns) == 1
        and returns[0].type.base == "Tensor"
        and not returns[0].type.is_list
        and not returns[0].type.optional
    )


@contextlib.contextmanager
def unset_fake_temporarily() -> Iterator[Any]:
    """The innermost FakeTensorMode off for the block (yielded; None if none is on), back in
    its place on the mode stack after it, as PyTorch's (code that must make a real tensor
    while tracing fakes).

    >>> from ember._subclasses.fake_tensor import FakeTensorMode, unset_fake_temporarily
    >>> with FakeTensorMode(), unset_fake_temporarily():
    ...     type(ember.ones(1)).__name__
    'Tensor'
    """
    stack = state.local.dispatch_modes
    at = next(
        (i for i in range(len(stack) - 1, -1, -1) if isinstance(stack[i], FakeTensorMode)), None
    )
    if at is None:
        yield None
        return
    above = [state.pop_dispatch_mode() for _ in range(len(stack) - at - 1)]
    mode = state.pop_dispatch_mode()
    for m in reversed(above):
        state.push_dispatch_mode(m)
    try:
        yield mode
    finally:
        above = [state.pop_dispatch_mode() for _ in range(len(stack) - at)]
        state.push_dispatch_mode(mode)
        for m in reversed(above):
            state.push_dispatch_mode(m)
