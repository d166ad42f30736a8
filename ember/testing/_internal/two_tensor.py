"""``TwoTensor``: a wrapper subclass that carries two tensors and runs every op on both, with
``__tensor_flatten__`` / ``__tensor_unflatten__`` so tracers can see through it, as
``torch.testing._internal.two_tensor``.

>>> from ember.testing._internal.two_tensor import TwoTensor
>>> t = TwoTensor(ember.ones(2), ember.zeros(2))
>>> (t * 2).a, (t * 2).b
(tensor([2., 2.]), tensor([0., 0.]))
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.utils._python_dispatch import TorchDispatchMode, return_and_correct_aliasing
from ember.utils._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["TwoTensor", "TwoTensorMode"]


class TwoTensor(Tensor):
    """Two tensors of one shape, dtype and device, seen as one."""

    a: Tensor
    b: Tensor

    def __new__(cls, a: Tensor, b: Tensor, outer_size: Any = None, outer_stride: Any = None) -> Any:
        if a.device != b.device or a.dtype != b.dtype or a.layout != b.layout:
            raise ValueError(
                "TwoTensor(a, b): a and b must share device, dtype and layout; got "
                f"{a.device}/{a.dtype} and {b.device}/{b.dtype}"
            )
        size = a.shape if outer_size is None else outer_size
        stride = a.stride() if outer_stride is None else outer_stride
        r = Tensor._make_wrapper_subclass(  # type: ignore[attr-defined]
            cls,
            size,
            strides=stride,
            storage_offset=a.storage_offset(),
            dtype=a.dtype,
            device=a.device,
            requires_grad=a.requires_grad,
        )
        r.a, r.b = a, b
        return r

    def __init__(self, a: Tensor, b: Tensor, outer_size: Any = None, outer_stride: Any = None):
        pass

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return f"TwoTensor({self.a!r}, {self.b!r})"

    def __tensor_flatten__(self) -> tuple[list[str], Any]:
        return ["a", "b"], None

    @staticmethod
    def __tensor_unflatten__(
        inner_tensors: dict[str, Tensor], meta: Any, outer_size: Any, outer_stride: Any
    ) -> TwoTensor:
        assert meta is None
        return TwoTensor(inner_tensors["a"], inner_tensors["b"], outer_size, outer_stride)

    @classmethod
    def __torch_dispatch__(
        cls, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        a_args = tree_map(lambda x: x.a if isinstance(x, TwoTensor) else x, args)
        b_args = tree_map(lambda x: x.b if isinstance(x, TwoTensor) else x, args)
        a_kwargs = tree_map(lambda x: x.a if isinstance(x, TwoTensor) else x, kwargs)
        b_kwargs = tree_map(lambda x: x.b if isinstance(x, TwoTensor) else x, kwargs)
        out_a = func(*a_args, **a_kwargs)
        out_b = func(*b_args, **b_kwargs)
        flat_a, spec = tree_flatten(out_a)
        flat_b = tree_flatten(out_b)[0]
        out = tree_unflatten(
            [
                TwoTensor(x, y) if isinstance(x, Tensor) else x
                for x, y in zip(flat_a, flat_b, strict=True)
            ],
            spec,
        )
        return return_and_correct_aliasing(func, args, kwargs, out)


class TwoTensorMode(TorchDispatchMode):
    """Makes every tensor a factory creates a TwoTensor (the second half a clone)."""

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        out = func(*args, **(kwargs or {}))
        takes_tensors = any(a.type.base == "Tensor" for a in func._schema.arguments)
        if not takes_tensors and isinstance(out, Tensor):
            return TwoTensor(out, out.clone())
        return out
