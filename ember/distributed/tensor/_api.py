"""``DTensor``: a tensor split or replicated over a ``DeviceMesh``, as
``torch.distributed.tensor.DTensor``. A wrapper subclass: autograd sees one tensor of the global
shape, ``__torch_dispatch__`` runs each op on this rank's piece after the sharding rules of
``_ops`` chose how the pieces must lie (``_dispatch``), and ``__tensor_flatten__`` lets
``ember.aot`` / ``ember.compile`` trace through it.

>>> from ember.distributed.tensor import init_device_mesh, distribute_tensor, Shard
>>> mesh = init_device_mesh("cpu", (1,))  # doctest: +SKIP
>>> d = distribute_tensor(ember.arange(4.0), mesh, [Shard(0)])  # doctest: +SKIP
>>> (d * 2).full_tensor()  # doctest: +SKIP
tensor([0., 2., 4., 6.])
"""

from __future__ import annotations

from typing import Any

import ember
import ember.distributed as dist
from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.distributed.device_mesh import DeviceMesh
from ember.distributed.tensor import _collectives as C
from ember.distributed.tensor._redistribute import redistribute_local
from ember.distributed.tensor._spec import (
    DTensorSpec,
    TensorMeta,
    local_shape,
    normalize_placements,
)
from ember.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_module", "distribute_tensor"]


class DTensor(Tensor):
    """A global tensor whose data lies on the ranks of ``device_mesh`` as ``placements`` say.
    Build one with ``distribute_tensor`` or ``DTensor.from_local``."""

    _local_tensor: Tensor
    _spec: DTensorSpec
    _view_copied = False  # NOTE [views of DTensors] (ember/distributed/tensor/_dispatch.py)

    def __new__(cls, local_tensor: Tensor, spec: DTensorSpec, *, requires_grad: bool) -> Any:
        meta = spec.tensor_meta
        r = Tensor._make_wrapper_subclass(  # type: ignore[attr-defined]
            cls,
            meta.shape,
            strides=meta.stride,
            dtype=local_tensor.dtype,
            device=local_tensor.device,
            requires_grad=requires_grad,
        )
        r._local_tensor = local_tensor
        r._spec = spec
        return r

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return (
            f"DTensor(local_tensor={self._local_tensor!r}, device_mesh={self._spec.mesh!r}, "
            f"placements={self._spec.placements!r})"
        )

    def numpy(self, *, force: bool = False) -> Any:
        raise RuntimeError(
            "DTensor.numpy(): a DTensor's data lies on several ranks; read "
            "d.full_tensor().numpy() (the whole tensor) or d.to_local().numpy() (this rank's "
            "piece)"
        )

    def tolist(self) -> Any:
        raise RuntimeError(
            "DTensor.tolist(): a DTensor's data lies on several ranks; read "
            "d.full_tensor().tolist() or d.to_local().tolist()"
        )

    @property
    def device_mesh(self) -> DeviceMesh:
        return self._spec.mesh

    @property
    def placements(self) -> tuple[Placement, ...]:
        return self._spec.placements

    def __tensor_flatten__(self) -> tuple[list[str], Any]:
        return ["_local_tensor"], (self._spec, self.requires_grad)

    @staticmethod
    def __tensor_unflatten__(
        inner: dict[str, Tensor], meta: Any, outer_size: Any, outer_stride: Any
    ) -> DTensor:
        spec, requires_grad = meta
        tm = spec.tensor_meta
        shape = tm.shape if outer_size is None else tuple(int(n) for n in outer_size)
        stride = tm.stride if outer_stride is None else tuple(int(n) for n in outer_stride)
        local = inner["_local_tensor"]
        spec = DTensorSpec(spec.mesh, spec.placements, TensorMeta(shape, stride, local.dtype))
        return DTensor(local, spec, requires_grad=requires_grad)

    @classmethod
    def __torch_dispatch__(
        cls, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        from ember.distributed.tensor._dispatch import dispatch  # cycle: it imports DTensor

        return dispatch(func, args, kwargs or {})

    @staticmethod
    def from_local(
        local_tensor: Tensor,
        device_mesh: DeviceMesh | None = None,
        placements: Any = None,
        *,
        run_check: bool = False,
        shape: Any = None,
        stride: Any = None,
    ) -> DTensor:
        """A DTensor whose piece on this rank is ``local_tensor`` (differentiable). Without
        ``shape`` (and ``stride``) every piece is taken to have this one's size, as PyTorch
        does (give ``shape`` for uneven pieces); ``run_check`` broadcasts rank 0's piece of a
        Replicate dimension so every rank holds the same."""
        if device_mesh is None:
            raise ValueError("DTensor.from_local: give the device_mesh")
        ps = normalize_placements(placements, device_mesh, local_tensor.ndim, "from_local")
        return _FromLocal.apply(local_tensor, device_mesh, ps, run_check, shape, stride)

    def to_local(self, *, grad_placements: Any = None) -> Tensor:
        """This rank's piece (differentiable: its gradient becomes a DTensor of this one's
        placements, or ``grad_placements``)."""
        if not ember.is_grad_enabled():
            return self._local_tensor
        return _ToLocal.apply(self, grad_placements)

    def redistribute(
        self,
        device_mesh: DeviceMesh | None = None,
        placements: Any = None,
        *,
        async_op: bool = False,
    ) -> DTensor:
        """The same global tensor laid out as ``placements`` (differentiable)."""
        mesh = self.device_mesh if device_mesh is None else device_mesh
        if mesh != self.device_mesh:
            raise NotImplementedError(
                "DTensor.redistribute: moving to another device mesh is not supported yet"
            )
        ps = normalize_placements(placements, mesh, self.ndim, "redistribute")
        for p in ps:
            if isinstance(p, Partial) and p not in self.placements:
                raise RuntimeError(
                    f"DTensor.redistribute: cannot make {self.placements} Partial ({ps}); "
                    "Partial arises from ops, as PyTorch's"
                )
        return _Redistribute.apply(self, ps)

    def full_tensor(self, *, grad_placements: Any = None) -> Tensor:
        """The whole global tensor on every rank (differentiable)."""
        rep = self.redistribute(placements=[Replicate()] * self.device_mesh.ndim)
        return rep.to_local(grad_placements=grad_placements)


def _make_spec(mesh: DeviceMesh, ps: tuple[Placement, ...], shape: Any, stride: Any, dtype: Any):
    shape = tuple(int(n) for n in shape)
    stride = _contiguous_stride(shape) if stride is None else tuple(int(s) for s in stride)
    return DTensorSpec(mesh, ps, TensorMeta(shape, stride, dtype))


def _contiguous_stride(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _global_shape(local: Tensor, mesh: DeviceMesh, ps: tuple[Placement, ...]) -> tuple[int, ...]:
    """The global shape when every piece has this one's size (PyTorch's assumption without
    ``shape=``): a Shard's dimension times its mesh dimension's size. No communication."""
    shape = list(local.shape)
    for i, p in enumerate(ps):
        if isinstance(p, Shard):
            shape[p.dim] *= mesh.size(i)
    return tuple(shape)


class _FromLocal(Function):
    @staticmethod
    def forward(ctx: Any, local: Tensor, mesh: DeviceMesh, ps: Any, run_check: bool,
                shape: Any, stride: Any) -> DTensor:  # fmt: skip
        ctx.ps = ps
        local = local.view_as(local)
        if run_check:
            for i, p in enumerate(ps):
                if isinstance(p, Replicate) and mesh.size(i) > 1:
                    C_broadcast(local, mesh, i)
                if isinstance(p, Shard) and shape is None and mesh.size(i) > 1:
                    n = ember.tensor([float(local.shape[p.dim])])
                    lo, hi = C.all_reduce(n, mesh, i, "min"), C.all_reduce(n, mesh, i, "max")
                    if lo.item() != hi.item():
                        raise ValueError(
                            f"DTensor.from_local: the pieces of {p!r} differ in size "
                            f"({int(lo.item())} to {int(hi.item())} along dim {p.dim}); "
                            "pass shape= (and stride=) for uneven pieces"
                        )
        if shape is None:
            shape = _global_shape(local, mesh, ps)
            stride = None
        spec = _make_spec(mesh, ps, shape, stride, local.dtype)
        return DTensor(local, spec, requires_grad=False)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        if isinstance(grad, DTensor):
            target = tuple(Replicate() if isinstance(p, Partial) else p for p in ctx.ps)
            grad = redistribute_local(grad._local_tensor, grad._spec, target)
        return grad, None, None, None, None, None


def C_broadcast(local: Tensor, mesh: DeviceMesh, mesh_dim: int) -> None:
    """Overwrite ``local`` with the piece of the first rank along ``mesh_dim``."""
    src = mesh._group_ranks(mesh_dim)[0]
    with ember.no_grad():
        buf = local.contiguous().clone()
        dist.broadcast(buf, src=src, group=mesh.get_group(mesh_dim))
        local.copy_(buf)


class _ToLocal(Function):
    @staticmethod
    def forward(ctx: Any, d: DTensor, grad_placements: Any) -> Tensor:
        ctx.spec = d._spec
        ctx.grad_placements = grad_placements
        return d._local_tensor.view_as(d._local_tensor)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Any:
        spec = ctx.spec
        if ctx.grad_placements is not None:
            ps = normalize_placements(ctx.grad_placements, spec.mesh, spec.ndim, "to_local")
            spec = DTensorSpec(spec.mesh, ps, spec.tensor_meta)
        return DTensor(grad, spec, requires_grad=False), None


class _Redistribute(Function):
    @staticmethod
    def forward(ctx: Any, d: DTensor, ps: tuple[Placement, ...]) -> DTensor:
        ctx.spec = d._spec
        local = redistribute_local(d._local_tensor, d._spec, ps)
        if local is d._local_tensor:
            local = local.view_as(local)
        spec = DTensorSpec(d._spec.mesh, ps, d._spec.tensor_meta)
        return DTensor(local, spec, requires_grad=False)

    @staticmethod
    def backward(ctx: Any, grad: DTensor) -> Any:
        # the gradient goes back to the input's layout; a Partial input's gradient is
        # Replicate (each part's derivative is the whole gradient)
        target = tuple(Replicate() if isinstance(p, Partial) else p for p in ctx.spec.placements)
        local = redistribute_local(grad._local_tensor, grad._spec, target)
        spec = DTensorSpec(grad._spec.mesh, target, grad._spec.tensor_meta)
        return DTensor(local, spec, requires_grad=False), None


def distribute_tensor(
    tensor: Tensor, device_mesh: DeviceMesh | None = None, placements: Any = None
) -> DTensor:
    """``tensor`` (the same on every rank; rank 0's wins, by broadcast, for a Replicate mesh
    dim as PyTorch) laid out over ``device_mesh`` as ``placements``; a leaf that requires grad
    when ``tensor`` does.

    >>> mesh = init_device_mesh("cpu", (1,))  # doctest: +SKIP
    >>> distribute_tensor(ember.ones(2, 2), mesh, [Shard(1)]).placements  # doctest: +SKIP
    (Shard(dim=1),)
    """
    if device_mesh is None:
        raise ValueError("distribute_tensor: give the device_mesh")
    if isinstance(tensor, DTensor):
        raise ValueError("distribute_tensor: the tensor is already a DTensor; use redistribute")
    ps = normalize_placements(placements, device_mesh, tensor.ndim, "distribute_tensor")
    if any(isinstance(p, Partial) for p in ps):
        raise ValueError(f"distribute_tensor: placements {ps}: a tensor cannot start Partial")
    local = tensor.detach()
    coord = device_mesh.get_coordinate()
    with ember.no_grad():
        for i, p in enumerate(ps):
            if isinstance(p, Replicate) and device_mesh.size(i) > 1:
                local = local.contiguous().clone()
                C_broadcast(local, device_mesh, i)
        for i, p in enumerate(ps):
            if isinstance(p, Shard):
                local = C.local_piece(local, p.dim, device_mesh.size(i), coord[i])
        if local is tensor or local._base is not None or local.data_ptr() == tensor.data_ptr():
            local = local.clone()
    spec = _make_spec(device_mesh, ps, tensor.shape, tensor.stride(), tensor.dtype)
    assert tuple(local.shape) == local_shape(spec.shape, ps, coord, device_mesh.shape)
    return DTensor(local, spec, requires_grad=tensor.requires_grad)


def distribute_module(
    module: Any,
    device_mesh: DeviceMesh | None = None,
    partition_fn: Any = None,
    input_fn: Any = None,
    output_fn: Any = None,
) -> Any:
    """``module`` with its parameters and buffers DTensors: ``partition_fn(name, submodule,
    mesh)`` places each submodule's (Replicate for what it leaves plain), and ``input_fn`` /
    ``output_fn`` become forward pre-/post-hooks ``(module, inputs, mesh)`` /
    ``(module, outputs, mesh)``, as PyTorch's."""
    if device_mesh is None:
        raise ValueError("distribute_module: give the device_mesh")
    rep = [Replicate()] * device_mesh.ndim

    def replicate_rest(m: Any) -> None:
        for key, p in list(m._parameters.items()):
            if p is not None and not isinstance(p, DTensor):
                m.register_parameter(
                    key,
                    ember.nn.Parameter(
                        distribute_tensor(p.data, device_mesh, rep), p.requires_grad
                    ),  # fmt: skip
                )
        for key, b in list(m._buffers.items()):
            if b is not None and not isinstance(b, DTensor):
                m._buffers[key] = distribute_tensor(b, device_mesh, rep)

    for name, sub in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, sub, device_mesh)
        replicate_rest(sub)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda m, inputs: input_fn(m, inputs, device_mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda m, inputs, outputs: output_fn(m, outputs, device_mesh))
    return module
