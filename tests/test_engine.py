"""The backward engine and the graph it walks: next_functions as PyTorch lays them out, and
the engine's shortcuts (a node run straight after its only input, leaves accumulated on the
spot, gradients stolen as .grad) agreeing with the general path and with PyTorch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import Function

from .conftest import requires_torch, torch


def _layout(fn: Any) -> list[tuple[str | None, int]]:
    """A grad_fn's next_functions as (node name or None, input_nr)."""
    return [
        (None if n is None else n.name().removeprefix("torch::autograd::"), nr)
        for n, nr in fn.next_functions
    ]


def _pair(values: list[float], grad: bool) -> tuple[Any, Any]:
    return (
        ember.tensor(values, dtype=ember.float64, requires_grad=grad),
        torch.tensor(values, dtype=torch.float64, requires_grad=grad),
    )


# ------------------------------------------------------------------------- next_functions

#: graphs whose grad_fn layout must equal PyTorch's: (a, b) require grad, c does not
LAYOUTS: dict[str, Callable[[Any, Any, Any, Any], Any]] = {
    "mul_by_constant": lambda m, a, b, c: a * c,
    "cat_with_a_constant": lambda m, a, b, c: m.cat([a, c, b]),
    "addmm_constant_bias": lambda m, a, b, c: m.addmm(c[:2], a.view(2, 1), b.view(1, 2)),
    "chain": lambda m, a, b, c: (a * b).exp().sum(),
}


@requires_torch
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_next_functions_are_laid_out_as_in_torch(name: str) -> None:
    """One entry per Tensor input (per element of a Tensor[]), ``(None, 0)`` where no
    gradient flows."""
    (ea, ta), (eb, tb), (ec, tc) = (
        _pair([1.0, 2.0], True),
        _pair([3.0, 4.0], True),
        _pair([5.0, 6.0], False),
    )
    got = _layout(LAYOUTS[name](ember, ea, eb, ec).grad_fn)
    want = _layout(LAYOUTS[name](torch, ta, tb, tc).grad_fn)
    assert got == want


# ------------------------------------------------------------------------- engine paths


def _dropping(base: type) -> type:
    """A Function that passes x on but returns no gradient for it: the edge to x's leaf
    carries None."""

    class Dropped(base):  # type: ignore[valid-type,misc]
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 1

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return None

    return Dropped


_DROPPED = {ember: _dropping(Function)}
if torch is not None:
    _DROPPED[torch] = _dropping(torch.autograd.Function)


#: graphs exercising the engine's paths; each gets leaves (a, b) and returns a scalar
GRAPHS: dict[str, Callable[[Any, Any, Any], Any]] = {
    # a leaf reached twice: its two gradients are summed before .grad is set
    "leaf_used_twice": lambda m, a, b: (a * a * b).sum(),
    # a diamond: one node's output feeds two branches that meet again
    "diamond": lambda m, a, b: ((a * b).exp() * (a * b).sin()).sum(),
    # the last edge into a leaf brings no gradient, the other one does (both orders)
    "none_edge_last": lambda m, a, b: (_drop(m, a) + a * 2).sum() * b.sum(),
    "none_edge_first": lambda m, a, b: (a * 2 + _drop(m, a)).sum() * b.sum(),
    # a node with several outputs, one of which gets no gradient
    "unused_output": lambda m, a, b: m.max(m.stack([a, b]), 0)[0].sum(),
    # broadcasting: the gradient reaching b is reduced to its shape
    "broadcast": lambda m, a, b: (a.view(2, 1) * b).sum(),
    # a gradient handed through unchanged to two leaves (no leaf may alias another's .grad)
    "identity_to_two_leaves": lambda m, a, b: (a + b).sum(),
}


def _drop(m: Any, x: Any) -> Any:
    return _DROPPED[m].apply(x)


@requires_torch
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_engine_paths_match_torch(name: str) -> None:
    (ea, ta), (eb, tb) = _pair([0.5, -1.5], True), _pair([2.0, 0.25], True)
    GRAPHS[name](ember, ea, eb).backward()
    GRAPHS[name](torch, ta, tb).backward()
    for e, t in ((ea, ta), (eb, tb)):
        assert (e.grad is None) == (t.grad is None)
        if t.grad is not None:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    if ea.grad is not None and eb.grad is not None:  # each leaf owns its .grad
        ea.grad.add_(100)
        assert not np.any(eb.grad.numpy() >= 100)


@requires_torch
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_queued_leaves_match_inline_ones(name: str) -> None:
    """A pre-hook on a leaf's accumulator makes the engine queue it as a node (NOTE [leaves
    inline]); ``autograd.grad`` captures instead of accumulating. Both give the same
    gradients as the inline path."""
    (ea, _), (eb, _) = _pair([0.5, -1.5], True), _pair([2.0, 0.25], True)
    GRAPHS[name](ember, ea, eb).backward()
    inline = [ea.grad, eb.grad]

    (qa, _), (qb, _) = _pair([0.5, -1.5], True), _pair([2.0, 0.25], True)
    out = GRAPHS[name](ember, qa, qb)
    seen: list[Any] = []
    for leaf in (qa, qb):
        acc = _accumulator(out.grad_fn, leaf)
        if acc is not None:
            acc.register_prehook(lambda grads: seen.append(grads) and None)
    out.backward()
    assert seen, "the hooked accumulators ran"

    (ga, _), (gb, _) = _pair([0.5, -1.5], True), _pair([2.0, 0.25], True)
    captured = ember.autograd.grad(GRAPHS[name](ember, ga, gb), [ga, gb], allow_unused=True)
    for want, queued, grad in zip(inline, (qa.grad, qb.grad), captured, strict=True):
        for got in (queued, grad):
            assert (want is None) == (got is None)
            if want is not None:
                np.testing.assert_array_equal(got.numpy(), want.numpy())


def _accumulator(fn: Any, leaf: Any) -> Any:
    """The AccumulateGrad node of ``leaf`` in the graph under ``fn``."""
    stack, seen = [fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__ == "AccumulateGrad" and node.variable is leaf:
            return node
        stack += [n for n, _ in node.next_functions]
    return None


def test_a_user_gradient_is_never_kept_as_grad() -> None:
    """The engine keeps a formula's fresh gradient as .grad without a copy (NOTE [stealing
    gradients]), never one the user passed in or one still held elsewhere."""
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    seed = ember.tensor([3.0, 4.0])
    (x * 1).backward(seed)  # MulBackward0 returns a new tensor: stolen
    x.grad.add_(1)
    assert seed.tolist() == [3.0, 4.0]
    y = ember.tensor([1.0, 2.0], requires_grad=True)
    y.backward(seed)  # the seed itself reaches the leaf: copied
    y.grad.add_(1)
    assert seed.tolist() == [3.0, 4.0]


#: ways a gradient that flowed to two edges reaches each leaf as a view of itself
_VIEWS: dict[str, Callable[[Any], Any]] = {
    "view": lambda t: t.view(3),
    "reshape": lambda t: t.reshape(3),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "view_as_2d": lambda t: t.view(1, 3),
    "flatten": lambda t: t.flatten(),
    "expand": lambda t: t.expand(2, 3),
    "identity": lambda t: t,
    "broadcast": lambda t: t.view(1, 3) + ember.zeros(2, 1),
}


@pytest.mark.parametrize("how", list(_VIEWS))
def test_two_leaves_never_share_a_gradient(how: str) -> None:
    """AddBackward passes one gradient to both operands; a view formula then reshapes it for
    each leaf. Keeping those views as .grad would tie the two leaves' .grad to one array
    (PyTorch does, its issue #34082: unsound): clip_grad_norm_'s in-place scaling or a manual
    ``p.grad.add_`` on one parameter would change the other's."""
    f = _VIEWS[how]
    a = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = ember.tensor([4.0, 5.0, 6.0], requires_grad=True)
    ((f(a) + f(b)) * 2).sum().backward()
    expected = b.grad.tolist()
    a.grad.add_(100)
    assert b.grad.tolist() == expected
    assert a.grad.tolist() == [e + 100 for e in expected]


def test_a_leaf_gradient_never_aliases_what_others_hold() -> None:
    """A view of the user's seed, a retained non-leaf gradient passed on, and what a custom
    Function's backward returns (here a tensor it keeps) are copied into .grad."""
    seed = ember.tensor([3.0, 4.0])
    x = ember.tensor([[1.0, 2.0]], requires_grad=True)
    x.view(2).backward(seed)
    x.grad.add_(1)
    assert seed.tolist() == [3.0, 4.0]

    w = ember.tensor([1.0, 2.0], requires_grad=True)
    h = w + 0  # AddBackward passes h's gradient on to w unchanged
    h.retain_grad()
    (h * 3).sum().backward()
    w.grad.add_(1)
    assert h.grad.tolist() == [3.0, 3.0]

    kept = ember.tensor([5.0, 6.0])

    class Const(Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            return t * 1

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return kept

    v = ember.tensor([1.0, 2.0], requires_grad=True)
    Const.apply(v).sum().backward()
    v.grad.add_(1)
    assert kept.tolist() == [5.0, 6.0]


def test_a_view_of_a_gradient_only_one_leaf_gets_is_still_stolen() -> None:
    """Only shared memory forces the copy: a view formula's gradient that no other edge
    sees is kept as .grad itself (a detach(), as AccumulateGrad's), not cloned."""
    from ember.utils._python_dispatch import TorchDispatchMode

    class Names(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    a = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (a.view(1, 3) * 2).sum()
    with Names() as m:
        loss.backward()
    assert "clone.default" not in m.names and "detach.default" in m.names


# ------------------------------------------------------------------------- recording paths

#: functional ops the generated recorders cover, with arguments (a, b require grad)
RECORDED: dict[str, Callable[[Any, Any], tuple[Any, tuple[Any, ...]]]] = {
    "mul": lambda a, b: (ember.ops.aten.mul.Tensor, (a, b)),
    "relu": lambda a, b: (ember.ops.aten.relu.default, (a,)),  # saves its output
    "t": lambda a, b: (ember.ops.aten.t.default, (a.view(1, 2),)),  # a view: saves nothing
    "addmm": lambda a, b: (ember.ops.aten.addmm.default, (a, b.view(2, 1), a.view(1, 2))),
    "max_dim": lambda a, b: (ember.ops.aten.max.dim, (a.view(1, 2), 1)),  # two outputs
    "unbind": lambda a, b: (ember.ops.aten.unbind.int, (a.view(2, 1),)),  # a list of views
}


def _node_summary(out: Any) -> tuple[Any, ...]:
    outs = out if isinstance(out, (list, tuple)) else [out]
    node = next(o.grad_fn for o in outs if isinstance(o, ember.Tensor) and o.requires_grad)
    edges = [(None if n is None else n.name(), nr) for n, nr in node.next_functions]
    saved = [(type(s).__name__, s.output_nr) for s in node.saved]
    return (node.name(), edges, node.input_meta, saved, node.n_outputs, node.out_meta)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_generated_recorders_build_the_general_paths_node(name: str) -> None:
    """NOTE [generated recorders]: the per-op kernel and the boxed fallback record the same
    node, and the gradients through it agree."""
    from ember.autograd.kernel import autograd_fallback
    from ember.dispatch.keys import AUTOGRAD_BIT, CPU_BIT

    grads = []
    summaries = []
    for general in (False, True):
        a = ember.tensor([0.5, -1.5], dtype=ember.float64, requires_grad=True)
        b = ember.tensor([2.0, 0.25], dtype=ember.float64, requires_grad=True)
        op, args = RECORDED[name](a, b)
        if general:
            out = autograd_fallback(op, AUTOGRAD_BIT | CPU_BIT, args, {})
        else:
            out = op(*args)
            fn, _ = op._table[16]
            assert "recorder" in fn.__code__.co_filename  # the generated path ran
        summaries.append(_node_summary(out))
        outs = out if isinstance(out, (list, tuple)) else [out]
        zero = ember.zeros((), dtype=ember.float64)
        total = sum((o.sum() for o in outs if o.requires_grad), zero)
        grads.append(ember.autograd.grad(total, [a, b], allow_unused=True))
    assert summaries[0] == summaries[1]
    for g0, g1 in zip(*grads, strict=True):
        assert (g0 is None) == (g1 is None)
        if g0 is not None:
            np.testing.assert_array_equal(g0.numpy(), g1.numpy())
