"""``nn.Parameter``: a tensor that a ``Module`` registers as one of its parameters."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.dispatch import marks
from ember.dispatch.protocols import PLAIN_TYPES, disabled_torch_function_impl

__all__ = ["Parameter", "UninitializedParameter", "is_lazy"]


class _ParameterMeta(type):
    """``isinstance(t, Parameter)`` also holds for an instance of another Tensor subclass
    made a parameter by ``Parameter(t)`` (it keeps its own class), as in PyTorch."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Parameter and getattr(instance, "_is_param", False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A tensor that requires grad by default and that ``Module.__setattr__`` registers.

    It shares its values (and version counter) with the tensor it is built from.

    >>> ember.nn.Parameter(ember.zeros(2))
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = ember.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): expected a Tensor for data, got {type(data).__name__}; wrap "
                "values with ember.tensor(...) first"
            )
        if type(data) not in (Tensor, Parameter):
            # another subclass stays itself, marked as a parameter (PyTorch's custom path)
            t = data.detach().requires_grad_(requires_grad)  # type: ignore[attr-defined]
            if type(t) is not type(data):
                raise RuntimeError(
                    f"Parameter(): detach() of a {type(data).__name__} returned a "
                    f"{type(t).__name__}; a subclass must keep its class under detach() to "
                    "be a parameter"
                )
            t._is_param = True
            return t  # type: ignore[no-any-return]
        p = object.__new__(cls)
        p._edata = data._edata
        marks.take_backend(p, data)
        if data._vc is None:
            data._vc = [0]
        p._vc = data._vc  # in-place writes through either are seen by both (like detach)
        if requires_grad:
            if not (data.dtype.is_floating_point or data.dtype.is_complex):
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients "
                    f"(got {data.dtype}); convert with .to(ember.float32) or pass "
                    "requires_grad=False"
                )
            p.requires_grad = True
        return p

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return "Parameter containing:\n" + super().__repr__(tensor_contents=tensor_contents)

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        found = memo.get(id(self))
        if found is not None:
            return found
        out = Parameter(self.detach().clone(), self.requires_grad)  # type: ignore[attr-defined]
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self._value_array("pickle").copy(), self.requires_grad))


PLAIN_TYPES.add(Parameter)  # exactly Parameter stays out of __torch_function__, as Tensor
# ... and out of the handlers' ``types`` too, where a plain Tensor counts (PyTorch's
# Parameter disables the protocol): a subclass's ``super().__torch_function__`` among
# Parameters then runs the function (layer_norm's weight and bias)
Parameter.__torch_function__ = disabled_torch_function_impl  # type: ignore[attr-defined]


def _rebuild_parameter(data: Any, requires_grad: bool) -> Parameter:
    return Parameter(ember.from_numpy(data), requires_grad)


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (a lazy module's, until its first call):
    it holds no values until ``materialize(shape)`` turns it into an ordinary ``Parameter``.

    >>> p = ember.nn.parameter.UninitializedParameter()
    >>> p.materialize((2, 3)); type(p).__name__, p.shape
    ('Parameter', ember.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(
        cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> UninitializedParameter:
        return super().__new__(cls, ember.empty(0, device=device, dtype=dtype), requires_grad)  # type: ignore[return-value]

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the parameter uninitialised values of ``shape`` (and ``device``/``dtype``,
        by default its own) and make it a plain ``Parameter``."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.data = ember.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return "<UninitializedParameter>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (UninitializedParameter, (self.requires_grad,))


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is still uninitialised (a lazy module's, before its first call).

    >>> ember.nn.parameter.is_lazy(ember.nn.parameter.UninitializedParameter())
    True
    """
    return isinstance(param, UninitializedParameter)
