"""Activation checkpointing, as ``torch.utils.checkpoint``: run part of a model without
keeping what its backward needs, and run it again when backward gets there.

# NOTE [two checkpoints]
PyTorch has two implementations and so has ember, with PyTorch's choice between them:

- ``use_reentrant=True`` (PyTorch 2.13's default, with a warning when it is not passed): a
  custom ``Function`` runs the function under ``no_grad``, keeping only its inputs; its
  backward runs the function again with grad mode on and backpropagates through that copy
  (a backward inside the backward: "reentrant"). Only gradients of the tensor *inputs* come
  out of the node, so parameters used inside get theirs through that inner backward, into
  ``.grad``: ``autograd.grad`` cannot reach them, and keyword arguments are refused.
- ``use_reentrant=False``: the function runs with grad mode as it is, under a pair of saved
  tensor hooks (``saved_tensors_hooks``) whose ``pack`` keeps a position instead of the
  tensor; the first ``unpack`` runs the function again (under the same hooks' inverse:
  every tensor its ops save is collected, in order) and hands each formula the recomputed
  tensor at its position. The graph is the function's own, so gradients reach anything it
  used, ``autograd.grad`` works and keyword arguments are allowed. ember's nodes keep their
  saved tensors for the in-place version check (NOTE [packed saved tensors]), so this form
  recomputes as PyTorch's does but does not yet free memory: ``use_reentrant=True`` does.

Both restore the CPU random state before recomputing (``preserve_rng_state``), so dropout
draws the same mask twice.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from ember import random as _random
from ember._tensor import Tensor
from ember.autograd.api import backward as _backward
from ember.autograd.function import Function
from ember.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ember.autograd.saved_hooks import saved_tensors_hooks
from ember.dispatch import state

__all__ = [
    "CheckpointError",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_early_stop",
]


class CheckpointError(RuntimeError):
    """A recomputation that does not match the forward pass."""


def noop_context_fn() -> tuple[AbstractContextManager[Any], AbstractContextManager[Any]]:
    """``context_fn``'s default: no context around the forward or the recomputation."""
    return nullcontext(), nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Each tensor of ``inputs`` detached, keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            + type(inputs).__name__
        )
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            y = x.detach()
            y.requires_grad = x.requires_grad
            out.append(y)
        else:
            out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor input requires grad (a reentrant checkpoint then has no gradient
    to give back)."""
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3
        )


_EARLY_STOP = [True]


@contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """PyTorch's switch for stopping a recomputation once every saved tensor is back;
    ember always recomputes the whole function, so the setting changes no result."""
    old = _EARLY_STOP[0]
    _EARLY_STOP[0] = enable
    try:
        yield
    finally:
        _EARLY_STOP[0] = old


class CheckpointFunction(Function):
    """The reentrant checkpoint's node (NOTE [two checkpoints])."""

    @staticmethod
    def forward(
        ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool, *args: Any
    ) -> Any:  # type: ignore[override]
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
        ctx.tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_positions, ctx.saved_tensors, strict=True):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with _random.fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.rng_state is not None:
                _random.set_rng_state(ctx.rng_state)
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [
            (o, g)
            for o, g in zip(outputs, grads, strict=False)
            if isinstance(o, Tensor) and o.requires_grad
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        got = [x.grad if isinstance(x, Tensor) else None for x in detached]
        return (None, None, *got)


class _Frame:
    """One non-reentrant checkpoint call: what the recomputation needs, and what it gave."""

    __slots__ = ("fn", "args", "kwargs", "rng_state", "recompute_ctx", "metas", "values")

    def __init__(self, fn: Callable[..., Any], args: Any, kwargs: Any, rng_state: Any) -> None:
        self.fn, self.args, self.kwargs, self.rng_state = fn, args, kwargs, rng_state
        self.recompute_ctx: AbstractContextManager[Any] = nullcontext()
        self.metas: list[tuple[Any, Any]] = []  # (shape, dtype) of each tensor saved, in order
        self.values: list[Any] | None = None

    def pack(self, t: Tensor) -> int:
        self.metas.append((tuple(t.shape), t.dtype))
        return len(self.metas) - 1

    def unpack(self, i: int) -> Tensor:
        if self.values is None or self.values[i] is None:
            self.values = self._recompute()
        t = self.values[i]
        self.values[i] = None  # handed over: the formula holds it now
        return t  # type: ignore[no-any-return]

    def _recompute(self) -> list[Any]:
        saved: list[Tensor] = []

        def keep(t: Tensor) -> Tensor:
            saved.append(t)
            return t

        with _random.fork_rng(enabled=self.rng_state is not None):
            if self.rng_state is not None:
                _random.set_rng_state(self.rng_state)
            # the engine leaves the Autograd and torch-function keys out while formulas
            # run; the function is user code, rerun as it first ran
            with (
                state.UserCodeGuard(),
                enable_grad(),
                self.recompute_ctx,
                saved_tensors_hooks(keep, lambda t: t),
            ):
                self.fn(*self.args, **self.kwargs)
        metas = [(tuple(t.shape), t.dtype) for t in saved]
        if metas != self.metas:
            pairs = zip(self.metas, metas, strict=False)
            first = next((i for i, (a, b) in enumerate(pairs) if a != b), len(saved))
            raise CheckpointError(
                "torch.utils.checkpoint: the recomputation saved different tensors than the "
                f"forward pass: {len(self.metas)} in the forward pass, {len(metas)} when "
                f"recomputed, the first difference at saved tensor {first}. "
                "The checkpointed function must do the same work both times: make any "
                "randomness or data-dependent control flow repeatable (preserve_rng_state=True "
                "restores the random state)"
            )
        return list(saved)


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[
        [], tuple[AbstractContextManager[Any], AbstractContextManager[Any]]
    ] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)``, keeping for backward only what recomputing it needs
    (NOTE [two checkpoints]); ``preserve_rng_state`` (default True) may be passed as a
    keyword.

    >>> lin = ember.nn.Linear(3, 3)
    >>> x = ember.ones(2, 3, requires_grad=True)
    >>> y = ember.utils.checkpoint.checkpoint(lambda t: lin(t).relu(), x, use_reentrant=False)
    >>> y.sum().backward(); lin.weight.grad.shape
    ember.Size([3, 3])
    """
    if use_reentrant is None:
        warnings.warn(
            "ember.utils.checkpoint: pass use_reentrant explicitly, as PyTorch asks "
            "(use_reentrant=False is recommended); without it, checkpoint takes PyTorch "
            "2.13's default, use_reentrant=True",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve, *args)
    forward_ctx, recompute_ctx = context_fn()
    frame = _Frame(function, args, kwargs, _random.get_rng_state() if preserve else None)
    frame.recompute_ctx = recompute_ctx
    if not is_grad_enabled():  # nothing is saved: a plain call
        with forward_ctx:
            return function(*args, **kwargs)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_ctx:
        return function(*args, **kwargs)


def checkpoint_sequential(
    functions: Sequence[Callable[[Any], Any]] | Any,
    segments: int,
    input: Any,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run ``functions`` (a list or an ``nn.Sequential``) in ``segments`` pieces, each but
    the last checkpointed.

    >>> model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU(), ember.nn.Linear(2, 1))
    >>> x = ember.ones(4, 2, requires_grad=True)
    >>> ember.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False).shape
    ember.Size([4, 1])
    """
    if use_reentrant is None:
        warnings.warn(
            "ember.utils.checkpoint.checkpoint_sequential: pass use_reentrant explicitly "
            "(use_reentrant=False is recommended); without it, it takes PyTorch 2.13's "
            "default, use_reentrant=True",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(fns) // segments

    def run(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = fns[j](x)
            return x

        return forward

    end, x = -1, input
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        x = checkpoint(run(start, end), x, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(fns) - 1)(x)
