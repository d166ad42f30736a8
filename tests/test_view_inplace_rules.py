"""PyTorch's view + in-place rules (``CreationMeta``), each case compared with PyTorch.

A view made by a custom ``Function``, by a multi-output op (``unbind``, ``split``,
``chunk``) or under ``no_grad`` refuses an in-place write (of itself, or of its base when it
is later differentiated) with PyTorch's error; ``detach()``, ``.data``, ``as_subclass``,
``_make_subclass`` and ``Sub(t)`` alias as PyTorch's do (NOTE [view creation meta] in
``ember/autograd/view_rules.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import ember

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

requires_torch = pytest.mark.skipif(torch is None, reason="PyTorch is the oracle here")

Case = Callable[[Any], Any]
CASES: dict[str, Case] = {}


def case(f: Case) -> Case:
    CASES[f.__name__] = f
    return f


def _fns(lib: Any) -> Any:
    class Alias(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x[:]

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    class Ident(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x[0], x[1]

        @staticmethod
        def backward(ctx: Any, g0: Any, g1: Any) -> Any:
            return lib.stack([g0, g1])

    return Alias, Ident, Two


def _leaf(lib: Any) -> Any:
    return lib.tensor([1.0, 2.0], requires_grad=True)


# ----------------------------------------------------------------- custom Function outputs
@case
def fn_view_base_written(lib: Any) -> Any:  # the example
    a = _leaf(lib)
    z = a.clone()
    v = _fns(lib)[0].apply(z)
    z.mul_(-1)
    v.sum().backward()
    return a.grad


@case
def fn_view_written(lib: Any) -> Any:
    v = _fns(lib)[0].apply(_leaf(lib).clone())
    v.mul_(-1)


@case
def fn_view_written_without_grad(lib: Any) -> Any:
    a = _leaf(lib)
    v = _fns(lib)[0].apply(a.clone())
    with lib.no_grad():
        v.mul_(-1)
    v.sum().backward()
    return a.grad


@case
def fn_input_returned_as_is(lib: Any) -> Any:
    z = _leaf(lib).clone()
    v = _fns(lib)[1].apply(z)
    return v is z, v._is_view(), v._base is z, z.grad_fn.name(), v.grad_fn.name()


@case
def fn_leaf_returned_as_is(lib: Any) -> Any:
    a = _leaf(lib)
    v = _fns(lib)[1].apply(a)
    v.sum().backward()
    return v is a, v._is_view(), v.requires_grad, v.is_leaf, a.is_leaf, a.grad


@case
def fn_input_returned_as_is_base_written(lib: Any) -> Any:
    a = _leaf(lib)
    z = a.clone()
    v = _fns(lib)[1].apply(z)
    z.mul_(-1)
    v.sum().backward()
    return a.grad


@case
def fn_input_returned_as_is_written(lib: Any) -> Any:
    v = _fns(lib)[1].apply(_leaf(lib))
    v.mul_(2)


@case
def fn_two_views_written(lib: Any) -> Any:
    p, _ = _fns(lib)[2].apply(_leaf(lib).clone())
    p.mul_(2)


@case
def fn_view_of_input_without_grad(lib: Any) -> Any:
    v = _fns(lib)[0].apply(lib.tensor([1.0, 2.0]))
    return v._is_view(), v.requires_grad


# ----------------------------------------------------------------- multi-output view ops
@case
def unbind_written(lib: Any) -> Any:
    p, _ = _leaf(lib).clone().unbind()
    p.mul_(2)


@case
def unbind_base_written(lib: Any) -> Any:
    a = _leaf(lib)
    z = a.clone()
    p, _ = z.unbind()
    z.mul_(2)
    p.backward()


@case
def unbind_sibling_view_written(lib: Any) -> Any:
    a = _leaf(lib)
    z = a.clone()
    p, _ = z.unbind()
    z[0].mul_(2)
    p.backward()


@case
def unbind_base_written_without_grad(lib: Any) -> Any:
    a = _leaf(lib)
    z = a.clone()
    p, _ = z.unbind()
    with lib.no_grad():
        z.mul_(2)
    p.backward()


@case
def unbind_written_without_grad(lib: Any) -> Any:
    a = _leaf(lib)
    p, q = a.clone().unbind()
    with lib.no_grad():
        p.mul_(2)
    q.backward()  # the other view is still fine
    return a.grad


@case
def unbind_unused_views_base_written(lib: Any) -> Any:
    a = _leaf(lib)
    z = a.clone()
    z.unbind()
    z.mul_(3)
    z.sum().backward()
    return a.grad


@case
def split_written(lib: Any) -> Any:
    p, _ = _leaf(lib).clone().split(1)
    p.mul_(2)


@case
def split_with_sizes_written(lib: Any) -> Any:
    p, _ = _leaf(lib).clone().split([1, 1])
    p.mul_(2)


@case
def chunk_written(lib: Any) -> Any:
    p, _ = _leaf(lib).clone().chunk(2)
    p.mul_(2)


@case
def split_into_one_written(lib: Any) -> Any:
    (p,) = _leaf(lib).clone().split(2)
    p.mul_(2)


@case
def view_of_unbind_written(lib: Any) -> Any:
    p, _ = _leaf(lib).clone().unbind()
    p.view(1).mul_(2)


@case
def tensor_split_written(lib: Any) -> Any:  # single-output slices: an ordinary view
    a = _leaf(lib)
    p, _ = a.clone().tensor_split(2)
    p.mul_(2)
    return p.grad_fn.name()


# ----------------------------------------------------------------- views under no_grad
@case
def nograd_view(lib: Any) -> Any:
    z = _leaf(lib).clone()
    with lib.no_grad():
        v = z[0]
    return v.requires_grad, v._is_view(), v.grad_fn, v.is_leaf


@case
def nograd_view_written(lib: Any) -> Any:
    z = _leaf(lib).clone()
    with lib.no_grad():
        v = z[0]
    v.mul_(2)


@case
def nograd_view_of_leaf_written(lib: Any) -> Any:
    a = _leaf(lib)
    with lib.no_grad():
        v = a[:1]
    v.mul_(2)


@case
def nograd_view_used(lib: Any) -> Any:
    a = _leaf(lib)
    with lib.no_grad():
        v = a[:1]
    y = (v * 2).sum()
    y.backward()
    return y.requires_grad, a.grad


@case
def nograd_view_written_without_grad(lib: Any) -> Any:
    a = _leaf(lib)
    with lib.no_grad():
        v = a[:1]
        v.mul_(2)
    return a.tolist()


@case
def view_written_without_grad(lib: Any) -> Any:  # an ordinary view: allowed
    a = _leaf(lib)
    z = a.clone()
    v = z[:1]
    with lib.no_grad():
        v.mul_(3)
    z.sum().backward()
    return a.grad


@case
def view_base_written(lib: Any) -> Any:  # an ordinary view: rebased
    a = _leaf(lib)
    z = a.clone()
    v = z[:1]
    z.mul_(3)
    v.sum().backward()
    return a.grad


# ----------------------------------------------------------------- detach and .data
@case
def detach_is_no_view(lib: Any) -> Any:
    z = _leaf(lib).clone()
    d = z.detach()
    return d._is_view(), d._base is None, d.requires_grad


@case
def detach_written_with_a_gradient_source(lib: Any) -> Any:
    a = _leaf(lib)
    w = lib.tensor(3.0, requires_grad=True)
    y = a * 2
    d = y.detach()
    d.mul_(w)
    y.sum().backward()
    return y.grad_fn.name(), d.grad_fn.name(), a.grad, w.grad


@case
def detach_shares_the_version(lib: Any) -> Any:
    a = _leaf(lib)
    a.detach().add_(1)
    return a._version


@case
def data_has_its_own_version(lib: Any) -> Any:
    a = _leaf(lib)
    d = a.data
    d.add_(1)
    return a._version, d._version, d._is_view()


@case
def data_written_after_saving(lib: Any) -> Any:
    a = _leaf(lib)
    y = a.exp()
    y.data.mul_(2)
    y.sum().backward()
    return a.grad


# ----------------------------------------------------------------- subclasses
class _Subs:
    def __init__(self, lib: Any) -> None:
        class Sub(lib.Tensor):
            pass

        self.Sub = Sub


def _summary(s: Any, a: Any) -> Any:
    fn = s.grad_fn
    return (
        type(s).__name__,
        s._is_view(),
        s.requires_grad,
        s.is_leaf,
        None if fn is None else fn.name(),
        s._base is a if s._base is not None else None,
    )


@case
def sub_of_a_tensor_requiring_grad(lib: Any) -> Any:
    a = _leaf(lib)
    s = _Subs(lib).Sub(a)
    (s * 3).sum().backward()
    return _summary(s, a), a.grad


@case
def sub_of_a_non_leaf(lib: Any) -> Any:
    z = _leaf(lib).clone()
    return _summary(_Subs(lib).Sub(z), z)


@case
def sub_of_a_plain_tensor(lib: Any) -> Any:
    a = lib.tensor([1.0, 2.0])
    return _summary(_Subs(lib).Sub(a), a)


@case
def tensor_new_of_a_tensor(lib: Any) -> Any:
    a = _leaf(lib)
    Sub = _Subs(lib).Sub
    return _summary(lib.Tensor.__new__(Sub, a), a)


@case
def sub_written_in_place(lib: Any) -> Any:
    a = _leaf(lib)
    z = a.clone()
    s = _Subs(lib).Sub(z)
    s.mul_(2)
    z.sum().backward()
    return a.grad


@case
def as_subclass_of_a_non_leaf(lib: Any) -> Any:
    z = _leaf(lib).clone()
    return _summary(z.as_subclass(_Subs(lib).Sub), z)


@case
def as_subclass_base_written(lib: Any) -> Any:
    a = _leaf(lib)
    z = a.clone()
    s = z.as_subclass(_Subs(lib).Sub)
    z.mul_(2)
    s.sum().backward()
    return a.grad


@case
def make_subclass(lib: Any) -> Any:
    z = _leaf(lib).clone()
    return _summary(lib.Tensor._make_subclass(_Subs(lib).Sub, z, True), z)


@case
def make_subclass_written(lib: Any) -> Any:
    z = _leaf(lib).clone()
    lib.Tensor._make_subclass(_Subs(lib).Sub, z, True).mul_(2)


@case
def make_subclass_shares_the_version(lib: Any) -> Any:
    z = _leaf(lib).clone()
    s = lib.Tensor._make_subclass(_Subs(lib).Sub, z, True)
    z.mul_(2)
    return s._version, z._version


@case
def parameter_of_a_non_leaf(lib: Any) -> Any:
    z = _leaf(lib).clone()
    return _summary(lib.nn.Parameter(z), z)


def _outcome(lib: Any, f: Case) -> tuple[str, Any]:
    try:
        r = f(lib)
    except RuntimeError as e:
        return "raises", str(e)
    return "returns", _plain(r)


def _plain(r: Any) -> Any:
    if isinstance(r, tuple):
        return tuple(_plain(x) for x in r)
    if hasattr(r, "tolist"):
        return r.tolist()
    return r


@requires_torch
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name: str) -> None:
    ours = _outcome(ember, CASES[name])
    theirs = _outcome(torch, CASES[name])
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "raises":
        # ember names the op first ("mul_.Tensor: ..."); the rest is PyTorch's wording
        first = theirs[1].split(".")[0]
        assert first in ours[1], (ours[1], theirs[1])
    else:
        assert ours[1] == pytest.approx(theirs[1]) if _numeric(ours[1]) else ours == theirs


def _numeric(r: Any) -> bool:
    return isinstance(r, list) and all(isinstance(x, float) for x in r)


# ----------------------------------------------------------------- documented differences
def test_a_refused_view_raises_at_backward_not_when_used() -> None:
    """PyTorch raises when the view's grad_fn is next read (using it in an op); ember when
    backward reaches it (docs/autograd.md, "Known limits")."""
    Alias = _fns(ember)[0]
    a = _leaf(ember)
    z = a.clone()
    v = Alias.apply(z)
    z.mul_(-1)
    w = v * 2  # PyTorch raises here already
    with pytest.raises(RuntimeError, match="Output 0 of Alias is a view and its base"):
        w.sum().backward()


def test_a_view_of_a_tensor_without_grad_written_with_a_gradient_source_is_recorded() -> None:
    """PyTorch refuses it (the view has no history: "A view was created in no_grad mode");
    ember records the write (docs/autograd.md, "Known limits"), whose gradient is right."""
    a = ember.tensor([1.0, 2.0])
    w = ember.tensor(3.0, requires_grad=True)
    p, _ = a.unbind()
    p.mul_(w)
    a.sum().backward()
    assert a.tolist() == [3.0, 2.0] and w.grad.item() == 1.0
