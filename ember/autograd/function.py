"""``ember.autograd.Function``: user-defined ops with their own backward.

>>> class Square(ember.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return 2 * g * x
>>> Square.apply(ember.tensor([3.0], requires_grad=True))
tensor([9.], grad_fn=<SquareBackward>)
"""

from __future__ import annotations

import functools
from typing import Any

from ember._tensor import Tensor
from ember.autograd import copy_slices, saved_hooks, view_rules
from ember.autograd.forward_ad import _function as _forward_ad
from ember.autograd.grad_mode import no_grad
from ember.autograd.graph import NO_EDGE, Node, SavedTensor
from ember.autograd.kernel import gradient_edge
from ember.dispatch import marks, state


class FunctionCtx:
    """What ``forward`` and ``backward`` share: saved tensors and per-call flags."""

    def __init__(self) -> None:
        self._saved: list[SavedTensor] = []
        self._saved_raw: tuple[Any, ...] = ()
        self.needs_input_grad: tuple[bool, ...] = ()
        self._dirty: tuple[Tensor, ...] = ()
        self._non_differentiable: set[int] = set()
        self.materialize_grads = True
        self._name = "Function"
        self._saved_forward: tuple[Any, ...] = ()
        self._in_jvp = False

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` for backward; modifying one in place before then is an error."""
        self._saved_raw = tensors
        self._saved = [SavedTensor(t, self._name) for t in tensors if isinstance(t, Tensor)]
        if saved_hooks.STACK:  # NOTE [packed saved tensors]
            self._saved_raw = tuple(
                saved_hooks.Packed(t) if isinstance(t, Tensor) else t for t in tensors
            )

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep ``tensors`` for ``jvp``, which reads them as ``ctx.saved_tensors``."""
        self._saved_forward = tensors

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._in_jvp:
            return self._saved_forward
        it = iter(self._saved)
        return tuple(
            t.unpack()
            if isinstance(t, saved_hooks.Packed) and next(it).unpack() is not None
            else next(it).unpack()
            if isinstance(t, Tensor)
            else t
            for t in self._saved_raw
        )

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare the inputs ``forward`` modified in place (their history is rewritten)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that get no gradient (e.g. indices)."""
        self._non_differentiable |= {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` gets None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = value


class BackwardCFunction(Node):
    """The node of a custom ``Function``'s call; each Function gets a subclass named after
    it, its ``_backward_cls`` (``SquareBackward``), printed as a Python class, as PyTorch's."""

    __slots__ = ()
    __repr__ = object.__repr__


class Function:
    """Base class of ops with a hand-written backward: subclass, define ``forward`` and
    ``backward`` as static methods, call ``apply`` (full example: this module's docstring).

    >>> class Cube(ember.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x**3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 3 * g * x**2
    >>> x = ember.tensor([2.0], requires_grad=True)
    >>> y = Cube.apply(x); y.backward(); x.grad
    tensor([12.])
    >>> y.grad_fn
    <ember.autograd.function.CubeBackward object at ...>
    """

    #: the class of this Function's nodes (NOTE [node classes] in ``graph.py``)
    _backward_cls: type[Node] = BackwardCFunction

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = f"{cls.__name__}Backward"
        attrs = {"__slots__": (), "_name": name, "__module__": __name__, "__qualname__": name}
        cls._backward_cls = type(name, (BackwardCFunction,), attrs)

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        return NotImplemented

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the backward function for custom autograd.Function."
        )

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if _forward_ad.top_level(args, state.local.fw_ceiling) >= 0:
            return _forward_ad.apply_with_jvp(cls, args, kwargs)
        return cls._apply(args, kwargs)[0]

    @classmethod
    def _apply(cls, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, FunctionCtx]:
        """``apply`` without forward-mode AD: the outputs and the context."""
        ctx = FunctionCtx()
        ctx._name = f"{cls.__name__}Backward"
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        separate = cls.setup_context is not Function.setup_context
        with no_grad():
            out = cls.forward(*args, **kwargs) if separate else cls.forward(ctx, *args, **kwargs)
        if separate:
            cls.setup_context(ctx, args, out)
        out = _alias_inputs(out, args, ctx._dirty)
        if not (state.local.grad_enabled and any(ctx.needs_input_grad)):
            return out, ctx
        for t in ctx._dirty:
            _check_inplace_function(cls, t)
        edges = tuple(
            gradient_edge(a) if isinstance(a, Tensor) and a.requires_grad else NO_EDGE for a in args
        )
        # each gradient the backward returns is reduced to its input's shape and cast to its
        # dtype (PyTorch's validate_outputs): a forward run under autocast may compute in
        # another dtype than its inputs'
        metas = tuple(
            (a._edata.shape, a._edata.dtype) if isinstance(a, Tensor) and a.requires_grad else None
            for a in args
        )
        node = cls._backward_cls(_make_backward(cls, ctx), edges, metas, ctx=ctx)
        node.saved = ctx._saved
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        node.n_outputs = len(outs)
        node.materialize_grads = True  # out_meta is None where ctx said not to
        node.out_meta = tuple(
            (tuple(o.shape), o.dtype) if isinstance(o, Tensor) and ctx.materialize_grads else None
            for o in outs
        )
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor) or id(o) in ctx._non_differentiable:
                continue
            if o.dtype.category < 2:
                continue
            marks.mark_autograd(o)
            o.grad_fn = node
            o._output_nr = i
            if o._base is not None and not any(o is d for d in ctx._dirty):
                # NOTE [view creation meta]: a write into it, or its base, is refused
                copy_slices.track(o)
                view_rules.mark(
                    o,
                    view_rules.MULTI_OUTPUT_NODE
                    if len(outs) > 1
                    else view_rules.IN_CUSTOM_FUNCTION,
                )
        return out, ctx


def _alias_inputs(out: Any, args: tuple[Any, ...], dirty: tuple[Tensor, ...]) -> Any:
    """``out`` with each input returned as is (and not marked dirty) replaced by an alias of
    it, as PyTorch's ``apply`` does: the output gets the Function's history, the input keeps
    its own."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    changed = False
    for i, o in enumerate(outs):
        if isinstance(o, Tensor) and any(o is a for a in args) and not any(o is d for d in dirty):
            with no_grad():
                outs[i] = o.view_as(o)  # type: ignore[attr-defined]
            changed = True
    if not changed:
        return out
    if isinstance(out, list):
        return outs
    return type(out)(outs) if isinstance(out, tuple) else outs[0]


def _check_inplace_function(cls: type, t: Tensor) -> None:
    if t.requires_grad and t.grad_fn is None and t._base is None:
        raise RuntimeError(
            f"{cls.__name__}: a leaf Variable that requires grad has been used in an in-place "
            "operation (mark_dirty). Apply the function to a clone() of it."
        )


def _make_backward(cls: type[Function], ctx: FunctionCtx) -> Any:
    def backward(node: Node, grads: Any) -> Any:
        for s in node.saved:
            s.unpack()
        # user code: __torch_function__ applies again, and so does grad mode: the engine
        # leaves the Autograd key out while formulas run, but ``with enable_grad()`` in a
        # backward records, as in PyTorch (a reentrant checkpoint's backward does)
        with state.UserCodeGuard():
            result = cls.backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(node.next_functions)
        if len(result) < n:
            raise RuntimeError(
                f"function {cls.__name__}Backward returned an incorrect number of gradients "
                f"(expected {n}, got {len(result)})"
            )
        extra = result[n:]
        if any(r is not None for r in extra):
            raise RuntimeError(
                f"function {cls.__name__}Backward returned an incorrect number of gradients "
                f"(expected {n}, got {len(result)})"
            )
        return result[:n]

    return backward


_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Function):
    """Outputs that pass their values on but raise when differentiated (once_differentiable's
    second derivative), as PyTorch's ``DelayedError`` node."""

    @staticmethod
    def forward(ctx: Any, *outputs: Any) -> Any:
        return tuple(o.clone() if isinstance(o, Tensor) else o for o in outputs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError(_TWICE)


def once_differentiable(fn: Any) -> Any:
    """Decorates a ``backward``: it runs under ``no_grad``, and its results, when they would
    have needed a graph (grad mode on, a gradient that requires grad), require grad through
    a node that raises if differentiated again, as PyTorch's ``once_differentiable``."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not state.local.grad_enabled or not any(
            isinstance(a, Tensor) and a.requires_grad for a in args
        ):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        marked = tuple(
            o.detach().requires_grad_(True)
            if isinstance(o, Tensor) and o.is_floating_point()
            else o
            for o in outs
        )
        wrapped = _DelayedError.apply(*marked)
        return wrapped[0] if single else wrapped

    return wrapper
