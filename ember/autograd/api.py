"""``ember.autograd.backward`` / ``grad`` and the autograd methods of ``Tensor``."""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember
from ember._memory_format import preserve_format
from ember._tensor import Tensor, wrap
from ember.autograd.engine import run_backward
from ember.autograd.graph import AccumulateGrad, GradientEdge, _Handle
from ember.dispatch import marks
from ember.dispatch.dispatcher import runs_cpu_kernel_alone
from ember.dispatch.keys import AUTOGRAD_BIT
from ember.dispatch.state import FUNCTION_MODES, KeyGuard
from ember.dtypes import FLOATING_NP
from ember.ops.registry import ops
from ember.overrides import handle_torch_function, has_torch_function, is_tensor_like


def _grads_for(grads: Any, n: int) -> list[Any]:
    """One gradient (a tensor or None) per output, as PyTorch normalises ``grad_tensors`` /
    ``grad_outputs``: None for all, a tensor for one output, else a sequence of as many
    (anything else raises PyTorch's error: ``'float' object is not iterable``)."""
    if grads is None:
        return [None] * n
    gs = [grads] if is_tensor_like(grads) else list(grads)
    gs = gs[:n]  # extra ones are left out, as PyTorch's zip leaves them
    if len(gs) != n:
        raise RuntimeError(
            f"got {n} tensors and {len(gs)} gradients: give one gradient (or None) per output"
        )
    for g in gs:
        if g is not None and not is_tensor_like(g):
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}; wrap a "
                "number with ember.tensor(...)"
            )
    return gs


_ONES_LIKE = ops.aten.ones_like.default._dispatch


def _implicit_grad(t: Tensor) -> Tensor:
    """The gradient ``backward()`` starts a scalar ``t`` from: ``ones_like(t)``, the op with
    the arguments PyTorch's _make_grads gives it; made directly for a 0-dim cpu tensor that
    nothing but its CPU kernel would see the call on (no mode, no subclass: the result is
    the same, a fresh 0-dim one of ``t``'s dtype)."""
    d = t._edata
    if type(d) is np.ndarray and d.ndim == 0 and runs_cpu_kernel_alone(t):
        return wrap(np.ones((), d.dtype))
    return _ONES_LIKE(t, memory_format=preserve_format)


def _default_grads(tensors: Sequence[Tensor], grads: Sequence[Any]) -> list[Tensor]:
    out = []
    for i, t in enumerate(tensors):
        g = grads[i] if i < len(grads) else None  # (one each, from _grads_for)
        if isinstance(t, GradientEdge):
            out.append(_edge_grad(t, g, i))
            continue
        if g is None:
            if t._edata.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs (got shape "
                    f"{list(t.shape)}); pass gradient= with the shape of the output"
                )
            if t._edata.dtype not in FLOATING_NP:  # (bfloat16's kind is not "f")
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                )
            g = _implicit_grad(t)
        elif tuple(g.shape) != tuple(t.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                f"output[{i}] has a shape of {t.shape}."
            )
        if g._edata.dtype != t._edata.dtype:
            g = g.to(t.dtype)  # as PyTorch's validate_outputs does
        out.append(g)
    return out


def _edge_shape(edge: GradientEdge) -> tuple[tuple[int, ...], Any] | None:
    """The shape and ember dtype of the gradient ``edge`` takes, where the graph knows
    them: a leaf's, a tensor's that ``get_gradient_edge`` made the edge of, an output of an
    op with several (None otherwise)."""
    node = edge.node
    if type(node) is AccumulateGrad:
        v = node.variable
        return tuple(v.shape), v.dtype
    known = node.__dict__.get("_edge_meta", {}).get(edge.output_nr)
    if known is not None:  # recorded by get_gradient_edge
        return known  # type: ignore[no-any-return]
    meta = node.out_meta
    if edge.output_nr < len(meta) and meta[edge.output_nr] is not None:
        shape, dtype = meta[edge.output_nr]
        return tuple(shape), dtype
    return None


def _edge_grad(edge: GradientEdge, g: Any, i: int) -> Tensor:
    """The gradient backpropagation starts from at the output ``edge``: ``g``, or ones for
    an edge of one element."""
    if g is not None:
        return g  # type: ignore[no-any-return]
    known = _edge_shape(edge)
    if known is None:
        raise RuntimeError(
            f"grad can be implicitly created only for scalar outputs: ember cannot tell the "
            f"shape of output {i}, a GradientEdge of {edge.node.name()}; pass its gradient "
            "(grad_tensors= / grad_outputs=)"
        )
    shape, dtype = known
    if any(n != 1 for n in shape):
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if not dtype.is_floating_point:
        raise RuntimeError(
            f"grad can be implicitly created only for real scalar outputs but got {dtype}"
        )
    return ember.ones(shape, dtype=dtype)


def _as_tuple(x: Any) -> tuple[Any, ...]:
    """A tensor-like or a ``GradientEdge`` as a one-element tuple, a sequence as a tuple
    (PyTorch's normalisation of ``tensors`` / ``outputs`` / ``inputs`` before it hands
    them to a handler)."""
    return (x,) if is_tensor_like(x) or isinstance(x, GradientEdge) else tuple(x)


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves.

    >>> x = ember.ones(2, requires_grad=True); ember.autograd.backward((x * 3).sum()); x.grad
    tensor([3., 3.])
    """
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        warnings.warn(
            "`grad_variables` is deprecated. Use `grad_tensors` instead.",
            FutureWarning,
            stacklevel=2,
        )
        grad_tensors = grad_variables
    ins_tuple = None if inputs is None else _as_tuple(inputs)
    if ins_tuple is not None and not ins_tuple:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    ts_tuple = _as_tuple(tensors)
    relevant = tuple(t for t in (*ts_tuple, *(ins_tuple or ())) if is_tensor_like(t))
    if has_torch_function(relevant):  # the Python route, arguments as PyTorch passes them
        return handle_torch_function(  # type: ignore[no-any-return]
            backward,
            relevant,
            ts_tuple,
            grad_tensors=grad_tensors,
            retain_graph=retain_graph,
            create_graph=create_graph,
            inputs=ins_tuple,
        )
    ts = list(ts_tuple)
    gs = _default_grads(ts, _grads_for(grad_tensors, len(ts)))
    retain = create_graph if retain_graph is None else retain_graph
    ins = list(ins_tuple) if ins_tuple else None
    if ins is None:
        run_backward(ts, gs, retain_graph=retain, create_graph=create_graph)
        return
    grads = run_backward(
        ts, gs, retain_graph=retain, create_graph=create_graph, inputs=ins, accumulate=False
    )
    for x, g in zip(ins, grads, strict=True):
        if isinstance(x, GradientEdge):  # a leaf's accumulator: that leaf's .grad
            if type(x.node) is not AccumulateGrad:
                continue  # a non-leaf edge: as PyTorch, nothing to accumulate into
            x = x.node.variable
        if g is not None:
            x.grad = (
                g.detach()
                if x.grad is None and not create_graph
                else (g if x.grad is None else x.grad + g)
            )  # type: ignore[attr-defined]


def _batched_grad(
    outs: tuple[Any, ...],
    ins: tuple[Any, ...],
    grad_outputs: Any,
    retain_graph: bool | None,
    create_graph: bool,
    allow_unused: bool | None,
    materialize_grads: bool,
) -> tuple[Tensor | None, ...]:
    """``grad(..., is_grads_batched=True)``: ``grad_outputs`` carry a leading batch dim, and
    the gradients come back with it, computed by ``ember.func.vmap`` over the backward pass
    (as PyTorch's), not a loop.

    >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> ember.autograd.grad(x * x, x, ember.eye(2), is_grads_batched=True)[0]
    tensor([[2., 0.],
            [0., 4.]])
    """
    gs = _grads_for(grad_outputs, len(outs))
    if any(g is None for g in gs):
        raise RuntimeError(
            "autograd.grad(is_grads_batched=True): give one batched grad_output per output "
            f"({len(outs)} outputs, got {len(gs)} grad_outputs, None among them: "
            f"{any(g is None for g in gs)})"
        )

    def one(*rows: Any) -> tuple[Any, ...]:
        return grad(
            outs, ins, rows, retain_graph=True, create_graph=create_graph,
            allow_unused=allow_unused, materialize_grads=materialize_grads,
        )  # fmt: skip

    # the graph is kept (as with retain_graph=True) whatever retain_graph says: a batching
    # rule's slow fallback runs the backward once per row
    return tuple(ember.func.vmap(one)(*gs))  # type: ignore[attr-defined]


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated).

    >>> x = ember.ones(2, requires_grad=True); ember.autograd.grad((x * x).sum(), x)
    (tensor([2., 2.]),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but "
            "got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outs_tuple = _as_tuple(outputs)
    ins_tuple = _as_tuple(inputs)
    if not ins_tuple:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    relevant = tuple(t for t in (*outs_tuple, *ins_tuple) if is_tensor_like(t))
    if has_torch_function(relevant):  # the Python route, arguments as PyTorch passes them
        return handle_torch_function(  # type: ignore[no-any-return]
            grad,
            relevant,
            outs_tuple,
            ins_tuple,
            grad_outputs=grad_outputs,
            retain_graph=retain_graph,
            create_graph=create_graph,
            only_inputs=only_inputs,
            allow_unused=allow_unused,
            is_grads_batched=is_grads_batched,
            materialize_grads=materialize_grads,
        )
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    if is_grads_batched:  # one backward pass per row of grad_outputs, as one vmapped pass
        return _batched_grad(
            outs_tuple, ins_tuple, grad_outputs, retain_graph, create_graph, allow_unused,
            materialize_grads,
        )  # fmt: skip
    outs, ins = list(outs_tuple), list(ins_tuple)
    gs = _default_grads(outs, _grads_for(grad_outputs, len(outs)))
    retain = create_graph if retain_graph is None else retain_graph
    res = run_backward(
        outs, gs, retain_graph=retain, create_graph=create_graph, inputs=ins, accumulate=False,
        grad_call=True,
    )  # fmt: skip
    for i, r in enumerate(res):
        if r is None:
            if materialize_grads and isinstance(ins[i], GradientEdge):
                raise RuntimeError(
                    "materialize_grads cannot be used when the given input is a GradientEdge"
                )
            if materialize_grads:
                res[i] = ember.zeros_like(ins[i])  # type: ignore[attr-defined]
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
    if not create_graph:
        # results computed without a graph need no detach (PyTorch dispatches none here)
        res = [r.detach() if r is not None and r.requires_grad else r for r in res]  # type: ignore[attr-defined]
    return tuple(res)


# ------------------------------------------------------------------------- Tensor methods


def _backward(
    self: Tensor,
    gradient: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate the gradient of this tensor into the leaves' ``.grad``.

    >>> x = ember.ones(2, requires_grad=True); (x * 2).sum().backward(); x.grad
    tensor([2., 2.])
    """
    if (marks.wants_torch_function(self) or FUNCTION_MODES[0]) and has_torch_function((self,)):
        return handle_torch_function(  # type: ignore[no-any-return]
            Tensor.backward,  # type: ignore[attr-defined]
            (self,),
            self,
            gradient=gradient,
            retain_graph=retain_graph,
            create_graph=create_graph,
            inputs=inputs,
        )
    if gradient is None and inputs is None and not create_graph:  # loss.backward()
        ts = [self]
        gs = _default_grads(ts, ())
        run_backward(ts, gs, retain_graph=bool(retain_graph), create_graph=False)
        return
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_backward.__name__ = _backward.__qualname__ = "backward"
_backward.checks_torch_function = True  # type: ignore[attr-defined]  # with PyTorch's arguments


def _register_hook(self: Tensor, hook: Callable[[Tensor], Tensor | None]) -> _Handle:
    """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = self.grad_fn
    if node is None:
        hooks = self.__dict__.setdefault("_leaf_hooks", [])
    else:
        if node._tensor_hooks is None:
            node._tensor_hooks = {}
        node._watched = True
        hooks = node._tensor_hooks.setdefault(self._output_nr, [])
    hooks.append(hook)
    return _Handle(hooks, hook)


def _register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], None]) -> _Handle:
    """Call ``hook(tensor)`` after this leaf's ``.grad`` has been accumulated (an optimizer
    step per parameter, as soon as its gradient is ready).

    >>> w = ember.ones(2, requires_grad=True)
    >>> h = w.register_post_accumulate_grad_hook(lambda p: print("grad:", p.grad))
    >>> (w * 3).sum().backward()
    grad: tensor([3., 3.])
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = self.__dict__.setdefault("_post_accumulate_hooks", [])
    hooks.append(hook)
    return _Handle(hooks, hook)


def _retain_grad(self: Tensor) -> None:
    """Keep ``.grad`` for this non-leaf tensor after backward."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    node = self.grad_fn
    if node is None:
        return  # leaves keep their gradient anyway
    if node._retain is None:
        node._retain = {}
    node._watched = True
    node._retain[self._output_nr] = weakref.ref(self)
    self._retains_grad = True


def _detach_(self: Tensor) -> Tensor:
    """Make this tensor a leaf that does not require grad, in place (views refuse).

    >>> x = ember.ones(1, requires_grad=True)
    >>> y = x * 2; y.detach_()
    tensor([2.])
    >>> y.requires_grad, y.grad_fn
    (False, None)
    """
    with KeyGuard(exclude=AUTOGRAD_BIT):
        ops.aten.detach_.default(self)  # the op's own checks (no in-place detach of views)
    self.grad_fn = None
    marks.unmark_autograd(self)
    return self


def _retains_grad(self: Tensor) -> bool:
    return bool(self.__dict__.get("_retains_grad", False))


def install() -> None:
    Tensor.backward = _backward  # type: ignore[attr-defined]
    Tensor.register_hook = _register_hook  # type: ignore[attr-defined]
    Tensor.retain_grad = _retain_grad  # type: ignore[attr-defined]
    Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook  # type: ignore[attr-defined]
    Tensor.detach_ = _detach_  # type: ignore[attr-defined]
    Tensor.retains_grad = property(_retains_grad)  # type: ignore[attr-defined]
