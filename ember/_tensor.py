"""``ember.Tensor``: an ndarray (or a shape-only stand-in), its dispatch keys, and the
bookkeeping PyTorch keeps beside the data: version counter, view base, autograd fields.

Ops are not written here: methods and operators are bound from the op registry by
``ember._bind``. This file holds only what is a property of the object itself.

# NOTE [views and versions]
A view's ndarray is a NumPy view of its base's, so writes through either are visible in
both. ``_vc`` is a one-element list shared by a base and all its views: an in-place op bumps
``_vc[0]`` and ``_version`` reads it. A tensor that was never viewed nor mutated has
``_vc = None`` (version 0), so creating a result allocates no counter. ``_base`` is the
tensor a view was (transitively) taken from, ``None`` for a base.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ember import dtypes
from ember._graph_break import USER_CODE, side_effect
from ember._layout import layout, sparse_coo, strided
from ember._memory_format import contiguous_format, is_contiguous_for
from ember._shape_only import ShapeOnlyArray, contiguous_strides
from ember.device import CPU, device
from ember.dispatch import dispatcher
from ember.dispatch.keys import (
    AUTOGRAD_BIT,
    BACKEND_MASK,
    CPU_BIT,
    META_BIT,
    PYTHON_BIT,
    SPARSE_CPU_BIT,
    TORCH_FUNCTION_BIT,
    format_keyset,
)
from ember.dispatch.protocols import (
    DECLINED,
    GENERATED_MEMBERS,
    PLAIN_TYPES,
    PROPERTY_HOOK,
    classify,
    disabled_torch_function_impl,
)
from ember.dispatch.state import FUNCTION_MODES as _FUNCTION_MODES

_FROM_NP = dtypes.FROM_NUMPY
#: ``aten._local_scalar_dense.default``, set once the registry has it (ember/__init__.py):
#: what ``item()`` runs on a wrapper subclass, whose handler answers with a number
_LOCAL_SCALAR: list[Any] = [None]
_TF_BIT = TORCH_FUNCTION_BIT
_ndarray = np.ndarray

#: NOTE [compile side effects]: a trace's tensors hold no gradients of the user's
_GRAD_READ = (
    "the function reads a tensor's .grad, which the trace's tensors do not hold (the "
    "gradients of the tensors it is called with are not inputs of the graph)"
)
_GRAD_WRITE = "the function sets a tensor's .grad, which a graph cannot do"
_SIZES = 2  # ShapeOnlyArray.sizes_policy of dispatch_sizes_strides_policy="sizes"

#: a function called with (tensor, what) before a tensor's values are read (``item``,
#: ``bool``, ``numpy``...): ``make_fx`` sets it to refuse reads of traced tensors
VALUE_READ_HOOK: list[Any] = [None]


if TYPE_CHECKING:

    def _bound(*args: Any, **kwargs: Any) -> Any: ...


class Size(tuple[int, ...]):
    """A tensor's shape: a tuple of ints, printed as ``ember.Size([2, 3])``.

    >>> ember.zeros(2, 3).shape
    ember.Size([2, 3])
    """

    def numel(self) -> int:
        return math.prod(self)

    def __repr__(self) -> str:
        return f"ember.Size([{', '.join(str(s) for s in self)}])"

    def __getitem__(self, item: Any) -> Any:  # slices of a Size are Sizes
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out


def _legacy_data(args: tuple[Any, ...]) -> Any:
    """The array of PyTorch's legacy constructor on a subclass: ``Sub(2, 3)`` is uninitialised
    data of that shape, ``Sub([1, 2])`` the values in the default dtype (``Sub(t)`` is an
    alias of ``t``: ``Tensor.__new__``)."""
    np_dtype = dtypes.get_default_dtype().np
    if all(type(a) is int for a in args):
        return np.empty(args, np_dtype)
    if len(args) == 1:
        return np.array(args[0], np_dtype)
    raise TypeError(f"Tensor subclass(): expected sizes or one sequence of data, got {args!r}")


class Tensor:
    """A multi-dimensional array with PyTorch's semantics.

    >>> ember.tensor([1.0, 2.0]) + 1
    tensor([2., 3.])
    """

    # NOTE [tensor slot names]: PyTorch keeps a tensor's state in C++, so a subclass may name
    # its own attributes as it likes; ember's two slots carry an ``e`` (for ember) so that
    # the plain names stay free for subclasses (SUBCLASS_NAMES in
    # tests/test_protocol_details.py lists the names checked). Slot access costs the same
    # whatever the name.
    __slots__ = ("_edata", "_ekeys", "__dict__", "__weakref__")

    # Defaults kept on the class so creating a result sets two slots only.
    _vc: list[int] | None = None
    _base: Tensor | None = None
    grad_fn: Any = None
    _retains_grad: bool = False
    _output_nr: int = 0  # which output of its grad_fn this tensor is

    _edata: Any  # np.ndarray, or ShapeOnlyArray for tensors without data
    _ekeys: int

    if TYPE_CHECKING:  # methods and operators are bound from the op registry (ember/_bind.py)

        def __getattr__(self, name: str) -> Any: ...

        __add__ = __radd__ = __iadd__ = __sub__ = __rsub__ = __isub__ = _bound
        __mul__ = __rmul__ = __imul__ = __truediv__ = __rtruediv__ = __itruediv__ = _bound
        __floordiv__ = __rfloordiv__ = __ifloordiv__ = __mod__ = __rmod__ = __imod__ = _bound
        __pow__ = __rpow__ = __ipow__ = __matmul__ = __rmatmul__ = _bound
        __and__ = __rand__ = __iand__ = __or__ = __ror__ = __ior__ = _bound
        __xor__ = __rxor__ = __ixor__ = __lshift__ = __rshift__ = _bound
        __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _bound
        __neg__ = __abs__ = __invert__ = __pos__ = __getitem__ = __setitem__ = _bound

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        if cls is Tensor and (args or kwargs):
            raise TypeError(
                "ember.Tensor(...) does not build tensors from data; use ember.tensor(data) or "
                "ember.empty(size)"
            )
        if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
            # Sub(t): an alias of t as a Sub, as PyTorch's (in grad mode AliasBackward0,
            # so the gradient flows back to t)
            return args[0].as_subclass(cls)  # type: ignore[no-any-return]
        t = object.__new__(cls)
        t._edata = _legacy_data(args) if args else np.empty((0,), np.float32)
        backend = CPU_BIT
        if len(args) == 1 and isinstance(args[0], Tensor):  # its device's key (meta stays meta)
            backend = args[0]._ekeys & BACKEND_MASK
        t._ekeys = backend | classify(cls)  # NOTE [torch function keys]
        return t

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A subclass that defines only __torch_dispatch__ opts out of __torch_function__,
        # as PyTorch's Tensor metaclass arranges.
        super().__init_subclass__(**kwargs)
        if "__torch_dispatch__" in cls.__dict__ and "__torch_function__" not in cls.__dict__:
            cls.__torch_function__ = disabled_torch_function_impl  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ gradient
    # grad is read and written on every step: it checks __torch_function__ inline (as the
    # generated members do) instead of through overrides.guard_tensor_members's wrapper
    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward()`` accumulated into this leaf, or None."""
        if self._ekeys >= _TF_BIT or _FUNCTION_MODES[0]:
            r = PROPERTY_HOOK[0]("grad", self, None, False)
            if r is not DECLINED:
                return r  # type: ignore[no-any-return]
        if USER_CODE[0]:
            side_effect(_GRAD_READ)  # NOTE [compile side effects]
        return self.__dict__.get("grad")

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if self._ekeys >= _TF_BIT or _FUNCTION_MODES[0]:
            if PROPERTY_HOOK[0]("grad", self, value, True) is not DECLINED:
                return
        if USER_CODE[0]:
            side_effect(_GRAD_WRITE)
        self.__dict__["grad"] = value

    # ------------------------------------------------------------------ metadata
    @property
    def dtype(self) -> dtypes.dtype:
        return _FROM_NP[self._edata.dtype]

    # A wrapper subclass made with dispatch_sizes_strides_policy, dispatch_device or
    # dispatch_layout asks its handler for these (NOTE [custom metadata] in
    # ember/_wrapper_metadata.py): its ``data.sizes_policy`` and friends say which.
    @property
    def shape(self) -> Size:
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "sizes_policy", 0) == _SIZES:
            return data.ask_sizes(self)  # type: ignore[no-any-return]
        return Size(data.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the length of one dimension.

        >>> ember.zeros(2, 3).size(-1)
        3
        """
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "sizes_policy", 0) == _SIZES:
            return data.ask_size(self, dim)
        shape = data.shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, len(shape), "size")]

    def stride(self, dim: int | None = None) -> Any:
        """Strides in elements, or the stride of one dimension.

        >>> ember.zeros(2, 3).stride()
        (3, 1)
        """
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "sizes_policy", 0):
            strides = data.ask_strides(self)
        else:
            strides = strides_of(self)
        if dim is None:
            return strides
        return strides[_wrap_dim(dim, len(strides), "stride")]

    def storage_offset(self) -> int:
        """Offset of the first element in the shared storage, in elements.

        >>> ember.arange(6)[2:].storage_offset()
        2
        """
        data = self._edata
        if type(data) is not _ndarray:
            if getattr(data, "sizes_policy", 0) == _SIZES:
                return data.ask_offset(self)  # type: ignore[no-any-return]
            return int(data.offset)
        root = root_array(data)
        if root is data:
            return 0
        if data.size == 0:  # NOTE [empty views] in ember/backends/cpu/views.py
            return self.__dict__.get("_offset", 0)  # type: ignore[no-any-return]
        delta = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return delta // data.itemsize

    @property
    def device(self) -> device:
        data = self._edata
        if type(data) is _ndarray:
            return CPU
        return data.ask_device(self) if getattr(data, "custom_device", False) else data.device

    @property
    def is_meta(self) -> bool:
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "custom_device", False):
            return data.ask_device(self).type == "meta"  # type: ignore[no-any-return]
        return bool(self._ekeys & META_BIT)

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def layout(self) -> layout:
        data = self._edata
        if type(data) is _ndarray:
            return strided
        if getattr(data, "custom_layout", False):
            return data.ask_layout(self)  # type: ignore[no-any-return]
        return getattr(data, "layout", strided)

    @property
    def is_sparse(self) -> bool:
        """Whether the tensor has the sparse COO layout (NOTE [sparse layout] in
        ``ember/backends/sparse/coo.py``).

        >>> ember.zeros(2).is_sparse
        False
        """
        return self.layout is sparse_coo

    def dim(self) -> int:
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "sizes_policy", 0) == _SIZES:
            return data.ask_dim(self)  # type: ignore[no-any-return]
        return data.ndim  # type: ignore[no-any-return]

    @property
    def ndim(self) -> int:
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "sizes_policy", 0) == _SIZES:
            return data.ask_dim(self)  # type: ignore[no-any-return]
        return data.ndim  # type: ignore[no-any-return]

    def ndimension(self) -> int:
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "sizes_policy", 0) == _SIZES:
            return data.ask_dim(self)  # type: ignore[no-any-return]
        return data.ndim  # type: ignore[no-any-return]

    def numel(self) -> int:
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "sizes_policy", 0) == _SIZES:
            return data.ask_numel(self)  # type: ignore[no-any-return]
        return int(math.prod(data.shape))

    def nelement(self) -> int:
        return self.numel()

    def element_size(self) -> int:
        return int(self._edata.itemsize)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether elements are laid out row-major with no gaps (size-1 dims ignored), or as
        ``memory_format`` says (``ember.channels_last``: the channel dim innermost).

        >>> ember.zeros(2, 3).t().is_contiguous()
        False
        """
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "sizes_policy", 0):
            return data.ask_contiguous(self, memory_format)  # type: ignore[no-any-return]
        return contiguous_of(self, memory_format)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return bool(self._ekeys & AUTOGRAD_BIT)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients (or complex ones; "
                f"got {self.dtype})"
            )
        if not value and self.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        self._ekeys = (self._ekeys | AUTOGRAD_BIT) if value else (self._ekeys & ~AUTOGRAD_BIT)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def data(self) -> Tensor:
        """This tensor's values as a tensor autograd does not track (``detach()``).

        >>> ember.ones(2, requires_grad=True).data.requires_grad
        False

        Unlike ``detach()`` it has a version counter of its own, as PyTorch's: writing it
        in place does not invalidate the values a graph saved of this tensor.
        """
        out = self.detach()  # type: ignore[attr-defined]
        if out is not self and out.__dict__.get("_vc") is self._vc:
            del out._vc
        return out  # type: ignore[no-any-return]

    @data.setter
    def data(self, new: Tensor) -> None:
        # Swap the values under this object (nn.Module.to keeps Parameter identity this way).
        if not isinstance(new, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(new).__name__}")
        self._edata = new._edata
        self._ekeys = (new._ekeys & BACKEND_MASK) | (self._ekeys & ~BACKEND_MASK)

    @property
    def _version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc[0]

    def _bump_version(self) -> None:
        vc = self._vc
        if vc is None:
            self._vc = [1]
        else:
            vc[0] += 1

    def _is_view(self) -> bool:
        return self._base is not None

    def is_nonzero(self) -> bool:
        """The truth of a one-element tensor (PyTorch's errors for more or fewer elements).

        >>> ember.tensor([0.5]).is_nonzero()
        True
        """
        n = self.numel()
        if n != 1:
            more = "more than one value" if n else "no values"
            raise RuntimeError(f"Boolean value of Tensor with {more} is ambiguous")
        return bool(self.item())  # type: ignore[attr-defined]

    def data_ptr(self) -> int:
        data = self._edata
        if type(data) is not _ndarray:
            return 0
        return int(data.__array_interface__["data"][0])

    def _dispatch_keys(self) -> str:
        return format_keyset(self._ekeys)

    # ------------------------------------------------------------------ conversion
    def _value_array(self, what: str) -> np.ndarray:
        if VALUE_READ_HOOK[0] is not None:  # make_fx: a traced tensor's values are unknown
            VALUE_READ_HOOK[0](self, what)
        data = self._edata
        if type(data) is not _ndarray:
            materialize = getattr(data, "materialize", None)
            if materialize is not None:  # a lazy tensor computes its values now
                return materialize(what)
            raise RuntimeError(
                f"Tensor.{what}(): tensor on '{self.device}' (shape {tuple(data.shape)}) has no "
                "data; compute on the cpu device to read values"
            )
        return data

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as an ndarray that shares memory with this tensor.

        >>> ember.tensor([1, 2]).numpy()
        array([1, 2])
        """
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._value_array("numpy")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = self._value_array("__array__")
        return data if dtype is None else data.astype(dtype, copy=False)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number.

        >>> ember.tensor([2.5]).item()
        2.5
        """
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        local_scalar = _LOCAL_SCALAR[0]
        if local_scalar is not None:  # dispatched, as PyTorch's item(): a mode sees it
            return local_scalar(self)
        return self._value_array("item").reshape(()).item()  # while ember is being imported

    def tolist(self) -> Any:
        """Nested Python lists of the values.

        >>> ember.tensor([[1, 2]]).tolist()
        [[1, 2]]
        """
        return self._value_array("tolist").tolist()

    def __len__(self) -> int:
        data = self._edata
        if type(data) is not _ndarray and getattr(data, "sizes_policy", 0) == _SIZES:
            return data.ask_len(self)  # type: ignore[no-any-return]
        shape = data.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return int(shape[0])

    def __iter__(self) -> Iterator[Tensor]:
        if not self._edata.shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # type: ignore[attr-defined]

    def _scalar(self, what: str) -> Any:
        if type(self._edata) is not _ndarray and self._ekeys & PYTHON_BIT and self.numel() == 1:
            return _LOCAL_SCALAR[0](self)  # a wrapper: its handler gives the value
        data = self._value_array(what)
        if data.size != 1:
            more = "more than one value" if data.size else "no values"
            raise RuntimeError(
                f"Boolean value of Tensor with {more} is ambiguous"
                if what == "__bool__"
                else "only one element tensors can be converted to Python scalars"
            )
        return data.reshape(()).item()

    def __bool__(self) -> bool:
        return bool(self._scalar("__bool__"))

    def __float__(self) -> float:
        return float(self._scalar("__float__"))

    def __int__(self) -> int:
        return int(self._scalar("__int__"))

    def __complex__(self) -> complex:
        return complex(self._scalar("__complex__"))

    def __index__(self) -> int:
        if self.dtype.category > dtypes.INTEGRAL or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._scalar("__index__"))

    __hash__ = object.__hash__

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        from ember._tensor_str import tensor_repr  # cycle: _tensor_str imports ember._tensor

        return tensor_repr(self, tensor_contents=tensor_contents)

    def __format__(self, format_spec: str) -> str:
        if self._edata.ndim == 0 and type(self._edata) is _ndarray:
            return format(self.item(), format_spec)
        return object.__format__(self, format_spec)

    def __reduce_ex__(self, proto: Any) -> Any:
        from ember import _tensor_pickle as _PICKLE  # cycle: it imports this module

        if type(self) is Tensor and not self.__dict__.keys() - _PICKLE.INTERNAL:
            return (_rebuild, (self._value_array("pickle").copy(), self.requires_grad))
        return _PICKLE.reduce_ex(self, proto)  # NOTE [subclass pickling]

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        from ember import _tensor_pickle as _PICKLE  # cycle: it imports this module

        return _PICKLE.deepcopy(self, memo)  # type: ignore[no-any-return]

    @property
    def T(self) -> Tensor:
        """The dims in reverse order (a ``permute`` view).

        >>> ember.zeros(2, 3).T.shape
        ember.Size([3, 2])
        """
        if self._edata.ndim > 2:
            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                "deprecated; use `x.mT` for batches of matrices or `x.permute(...)`",
                UserWarning,
                stacklevel=2,
            )
        return self.permute(list(range(self._edata.ndim - 1, -1, -1)))  # type: ignore[attr-defined]

    @property
    def mT(self) -> Tensor:
        """The last two dims swapped (a ``transpose`` view).

        >>> ember.zeros(4, 2, 3).mT.shape
        ember.Size([4, 3, 2])
        """
        if self._edata.ndim < 2:
            raise RuntimeError(
                "tensor.mT is only supported on matrices or batches of matrices. Got "
                f"{self._edata.ndim}-D tensor."
            )
        return self.transpose(-2, -1)  # type: ignore[attr-defined]

    @property
    def mH(self) -> Tensor:
        """The conjugate transpose of the last two dims (``mT`` for real tensors).

        >>> ember.tensor([[1 + 2j, 3]]).mH
        tensor([[1.-2.j],
                [3.-0.j]])
        """
        if self._edata.ndim < 2:
            raise RuntimeError(
                "tensor.mH is only supported on matrices or batches of matrices. Got "
                f"{self._edata.ndim}-D tensor."
            )
        return self.transpose(-2, -1).conj()  # type: ignore[attr-defined]

    @property
    def H(self) -> Tensor:
        """The conjugate transpose of a matrix (2-D only; ``mH`` takes batches)."""
        if self._edata.ndim != 2:
            raise RuntimeError(
                "tensor.H is only supported on matrices (2-D tensors). Got "
                f"{self._edata.ndim}-D tensor."
            )
        return self.mH

    def dim_order(self, *, ambiguity_check: bool = False) -> tuple[int, ...]:
        """The dims from the largest stride to the smallest (ties in dim order): how the
        tensor is laid out in memory.

        >>> ember.zeros(2, 3, 4).permute(2, 0, 1).dim_order()
        (1, 2, 0)
        """
        strides = self.stride()  # type: ignore[attr-defined]
        order = tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))
        if ambiguity_check and len(set(strides)) != len(strides):
            raise RuntimeError(
                "The tensor does not have unique dim order, or cannot map to exact one of the "
                f"given memory formats (strides {list(strides)})"
            )
        return order


def root_array(arr: np.ndarray) -> np.ndarray:
    """The ndarray that owns ``arr``'s memory (through views and ``__array_interface__``
    wrappers, which NumPy's ``as_strided`` leaves in the ``.base`` chain)."""
    root = arr
    base = arr.base
    while base is not None:
        if isinstance(base, _ndarray):
            root = base
        base = getattr(base, "base", None)
    return root


def _rebuild(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = wrap(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


def strides_of(t: Tensor) -> tuple[int, ...]:
    """``t``'s stored strides in elements (what ``stride()`` gives without a handler)."""
    data = t._edata
    if data.size <= 1 and type(data) is _ndarray and t._base is None:
        # NumPy leaves these strides arbitrary; a view's are set by its op (PyTorch's)
        return contiguous_strides(data.shape)
    item = data.itemsize
    return tuple(s // item for s in data.strides)


def contiguous_of(t: Tensor, memory_format: Any) -> bool:
    """Whether ``t``'s stored sizes and strides are contiguous in ``memory_format`` (row-major
    for None or ``contiguous_format``; size-1 dims ignored)."""
    shape = t._edata.shape
    strides = strides_of(t)
    if memory_format is not None and memory_format is not contiguous_format:
        return is_contiguous_for(shape, strides, memory_format, "is_contiguous")
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        if n != 1:
            if s != expected:
                return 0 in shape  # no elements: contiguous whatever the strides
            expected *= n
    return True


def _wrap_dim(dim: int, ndim: int, what: str) -> int:
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not lo <= dim <= hi:
        raise IndexError(
            f"{what}(): Dimension out of range (expected to be in range of [{lo}, {hi}], "
            f"but got {dim})"
        )
    return dim % ndim if ndim else 0


# ---------------------------------------------------------------------- construction

_new = object.__new__
_generic = np.generic
_asarray = np.asarray


def _kernel_data(arr: Any, view: bool) -> Any:
    """``arr`` as a tensor's data, for the rare result that is not exactly an ndarray.

    # NOTE [kernel results are arrays]
    NumPy gives a NumPy scalar (``np.int64``, ``np.float32``), not a 0-d array, for a full
    reduction of a 1-D array, for indexing that picks one element, and for many ``np.*``
    functions of 0-d input. A tensor holding one has no buffer, shape or strides: its repr,
    ``item()`` and ``numpy()`` fail. ``wrap`` is the one place kernel results become
    tensors, so it turns a NumPy scalar into a 0-d array (a copy: it is a new result anyway)
    and an ndarray subclass into a plain ndarray over the same memory; anything else is a
    kernel bug, reported at once instead of as a broken tensor later. ``wrap_view`` refuses
    a NumPy scalar too: a scalar is a copy, so a "view" of it would not see writes to its
    base (a view kernel must index with ``...`` to keep a 0-d view). The test is one
    ``type(arr) is ndarray`` on the hot path; this function runs only when it fails.
    """
    if isinstance(arr, _ndarray):
        return arr.view(_ndarray)
    if isinstance(arr, _generic) and not view:
        return _asarray(arr)
    if view and isinstance(arr, ShapeOnlyArray):
        return arr
    what = "a view of a NumPy scalar (a copy, not a view)" if view else type(arr).__name__
    raise TypeError(
        f"internal error: a kernel returned {what} where a tensor's data must be a NumPy "
        "ndarray; please report it with the op that produced it (NOTE [kernel results are "
        "arrays] in ember/_tensor.py)"
    )


def wrap(arr: np.ndarray) -> Tensor:
    """A new base tensor over ``arr`` (the ndarray is not copied; a NumPy scalar becomes a
    0-d array: NOTE [kernel results are arrays])."""
    if type(arr) is not _ndarray:
        arr = _kernel_data(arr, False)
    t = _new(Tensor)
    t._edata = arr
    t._ekeys = CPU_BIT
    return t


def wrap_view(src: Tensor, arr: Any) -> Tensor:
    """A view of ``src`` over ``arr`` (an ndarray view of ``src._edata``, or a ShapeOnlyArray):
    shares the version counter, records the base. See NOTE [views and versions]."""
    if type(arr) is not _ndarray:
        arr = _kernel_data(arr, True)
    t = _new(Tensor)
    t._edata = arr
    t._ekeys = src._ekeys & BACKEND_MASK
    vc = src._vc
    if vc is None:
        vc = src._vc = [0]
    t._vc = vc
    base = src._base
    t._base = src if base is None else base
    return t


def wrap_shape_only(arr: ShapeOnlyArray, keys: int = META_BIT) -> Tensor:
    """A new tensor with no data (meta device, by default)."""
    t = _new(Tensor)
    t._edata = arr
    t._ekeys = keys
    return t


def wrap_shape_only_like(arr: ShapeOnlyArray, like: Tensor) -> Tensor:
    """A new tensor with no data that dispatches as ``like`` does (its keys; a Meta rule
    whose result keeps its input's)."""
    return wrap_shape_only(arr, like._ekeys)


def wrap_sparse(coo: Any) -> Tensor:
    """A new sparse tensor over ``coo`` (a ``SparseCOO``: NOTE [sparse layout] in
    ``ember/backends/sparse/coo.py``)."""
    t = _new(Tensor)
    t._edata = coo
    t._ekeys = SPARSE_CPU_BIT
    return t


dispatcher.bind_tensor_type(Tensor)
PLAIN_TYPES.add(Tensor)
GENERATED_MEMBERS.add("grad")  # checks the protocol inline
