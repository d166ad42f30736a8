"""ember.autograd.forward_ad against torch.autograd.forward_ad: dual tensors, levels, views,
in-place ops, custom Functions' jvp, composition with backward mode, gradcheck's forward
mode, and a plain op's key set (no tangent: the forward-mode kernel is never reached)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember
import ember.autograd.forward_ad as fwAD
from ember.dispatch.keys import FORWARD_AD_BIT


def _pair(*shape: int, seed: int = 0) -> tuple[ember.Tensor, torch.Tensor]:
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _close(e: ember.Tensor | None, t: torch.Tensor | None) -> None:
    assert (e is None) == (t is None)
    if e is not None:
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_make_and_unpack_dual() -> None:
    x, tx = _pair(3)
    v, tv = _pair(3, seed=1)
    with fwAD.dual_level(), tfw.dual_level():
        d, td = fwAD.make_dual(x, v), tfw.make_dual(tx, tv)
        y = (d.sin() * d).exp().sum(0, keepdim=True) / (d.abs() + 1)
        ty = (td.sin() * td).exp().sum(0, keepdim=True) / (td.abs() + 1)
        p, t = fwAD.unpack_dual(y)
        _close(p, tfw.unpack_dual(ty).primal)
        _close(t, tfw.unpack_dual(ty).tangent)
        assert isinstance(fwAD.unpack_dual(y), fwAD.UnpackedDualTensor)
        assert fwAD.unpack_dual(x).tangent is None  # the primal itself is untouched
    assert fwAD.unpack_dual(y).tangent is None  # the level's tangents are gone
    assert not y._ekeys & FORWARD_AD_BIT


def test_plain_tensors_never_carry_the_key() -> None:
    x = ember.ones(3)
    with fwAD.dual_level():
        y = x + 1
        assert not y._ekeys & FORWARD_AD_BIT
        d = fwAD.make_dual(x, ember.ones(3))
        assert d._ekeys & FORWARD_AD_BIT
        assert (d.detach()._ekeys & FORWARD_AD_BIT) == 0  # detach drops the tangent


def test_views_share_the_tangent() -> None:
    x, tx = _pair(2, 3)
    v, tv = _pair(2, 3, seed=1)
    with fwAD.dual_level(), tfw.dual_level():
        d, td = fwAD.make_dual(x, v), tfw.make_dual(tx, tv)
        row, trow = d[1], td[1]
        _close(fwAD.unpack_dual(row).tangent, tfw.unpack_dual(trow).tangent)
        t_base = fwAD.unpack_dual(d).tangent
        t_view = fwAD.unpack_dual(d.t()).tangent
        assert t_view._base is not None or t_view.data_ptr() == t_base.data_ptr()
        row.mul_(3)  # writes through the view: the base's tangent changes too
        trow.mul_(3)
        _close(fwAD.unpack_dual(d).tangent, tfw.unpack_dual(td).tangent)
        _close(fwAD.unpack_dual(d).primal, tfw.unpack_dual(td).primal)


def test_inplace_on_a_plain_tensor_with_a_dual_operand() -> None:
    x, tx = _pair(4)
    v, tv = _pair(4, seed=1)
    with fwAD.dual_level(), tfw.dual_level():
        d, td = fwAD.make_dual(x, v), tfw.make_dual(tx, tv)
        buf, tbuf = ember.zeros(2, 4, dtype=ember.float64), torch.zeros(2, 4, dtype=torch.float64)
        buf[0].copy_(d)  # a view of a plain tensor gets a tangent, and so does its base
        tbuf[0].copy_(td)
        buf[1].add_(d * d)
        tbuf[1].add_(td * td)
        _close(fwAD.unpack_dual(buf).tangent, tfw.unpack_dual(tbuf).tangent)
        e, te = x.clone(), tx.clone()
        e.mul_(d)
        te.mul_(td)
        _close(fwAD.unpack_dual(e).tangent, tfw.unpack_dual(te).tangent)


def test_nested_levels_second_derivative() -> None:
    x = ember.tensor([0.5, 1.5], dtype=ember.float64)
    one = ember.ones(2, dtype=ember.float64)
    with fwAD.dual_level() as outer:
        a = fwAD.make_dual(x, one, level=outer)
        with fwAD.dual_level() as inner:
            assert inner == outer + 1
            b = fwAD.make_dual(a, one, level=inner)
            p, t = fwAD.unpack_dual(b.exp() * b, level=inner)
        d2 = fwAD.unpack_dual(t, level=outer).tangent  # d/dx of (x+1) e^x
        np.testing.assert_allclose(d2.numpy(), ((x + 2) * x.exp()).numpy())
        assert fwAD.unpack_dual(p, level=outer).tangent is not None


def test_forward_over_reverse_and_reverse_over_forward() -> None:
    x, tx = _pair(3)
    v, tv = _pair(3, seed=1)
    x.requires_grad_()
    tx.requires_grad_()
    with fwAD.dual_level(), tfw.dual_level():
        d, td = fwAD.make_dual(x, v), tfw.make_dual(tx, tv)
        (g,) = ember.autograd.grad((d.tanh() ** 3).sum(), d, create_graph=True)
        (tg,) = torch.autograd.grad((td.tanh() ** 3).sum(), td, create_graph=True)
        _close(fwAD.unpack_dual(g).tangent, tfw.unpack_dual(tg).tangent)  # H v
        t = fwAD.unpack_dual(ember.linalg.vector_norm(d * d)).tangent
        tt = tfw.unpack_dual(torch.linalg.vector_norm(td * td)).tangent
        _close(ember.autograd.grad(t, x)[0], torch.autograd.grad(tt, tx)[0])


def test_errors_name_the_problem() -> None:
    with pytest.raises(RuntimeError, match="dual level must be open"):
        fwAD.make_dual(ember.ones(2), ember.ones(2))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(ember.ones(2), ember.ones(3))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(ember.ones(2, dtype=ember.int64), ember.ones(2))
        d = fwAD.make_dual(ember.ones(2), ember.ones(2))
        with pytest.raises(RuntimeError, match="out="):
            ember.sin(d, out=ember.empty(2))
        with pytest.raises(NotImplementedError, match="forward AD with unique_consecutive"):
            ember.unique_consecutive(d * 2, return_counts=True)
    outer = fwAD.enter_dual_level()
    fwAD.enter_dual_level()
    with pytest.raises(RuntimeError, match="innermost"):
        fwAD.exit_dual_level(level=outer)
    fwAD.exit_dual_level()
    fwAD.exit_dual_level(level=outer)


class _Cube(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def]
        ctx.save_for_forward(x)
        return x**3, x.sum()

    @staticmethod
    def jvp(ctx, t):  # type: ignore[no-untyped-def]
        (x,) = ctx.saved_tensors
        return 3 * x**2 * t, t.sum()

    @staticmethod
    def backward(ctx, g, h):  # type: ignore[no-untyped-def]
        raise AssertionError("forward mode never calls backward")


def test_custom_function_jvp() -> None:
    x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    with fwAD.dual_level():
        y, s = _Cube.apply(fwAD.make_dual(x, ember.tensor([1.0, 3.0], dtype=ember.float64)))
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), [3.0, 36.0])
        np.testing.assert_allclose(fwAD.unpack_dual(s).tangent.numpy(), 4.0)
    h = ember.func.jacfwd(lambda x: _Cube.apply(x)[0])
    np.testing.assert_allclose(ember.func.jacfwd(h)(x).numpy()[1, 1, 1], 12.0)  # 6x


def test_custom_function_without_jvp_raises() -> None:
    class Twice(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            return 2 * x

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            return 2 * g

    with pytest.raises(NotImplementedError, match="jvp"):
        ember.func.jvp(Twice.apply, (ember.ones(2),), (ember.ones(2),))


def test_gradcheck_forward_mode_catches_a_wrong_formula() -> None:
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: x.sin() * x, (x,), check_forward_ad=True)

    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            (x,) = ctx.saved_tensors
            return 2 * g * x

        @staticmethod
        def jvp(ctx, t):  # type: ignore[no-untyped-def]
            (x,) = ctx.saved_tensors
            return 3 * t * x  # wrong

    with pytest.raises(ember.autograd.GradcheckError, match="forward AD"):
        ember.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True)
    assert ember.autograd.gradcheck(Wrong.apply, (x,))  # backward alone is right


def test_every_rule_kind_is_used() -> None:
    from ember.autograd.function_table import DERIVATIVES

    kinds = {fwAD.rule_name(op) for op in DERIVATIVES}
    assert kinds == {"written", "linear", "element-wise", "double-vjp", "random"}


def test_lazy_device_traces_tangents() -> None:
    x = ember.tensor([0.5, 1.0], dtype=ember.float64)
    want = ember.func.jvp(lambda x: x.exp() * x.sin(), (x,), (ember.ones_like(x),))[1]
    lx = x.to("lazy")
    got = ember.func.jvp(lambda x: x.exp() * x.sin(), (lx,), (ember.ones_like(lx),))[1]
    assert got.device.type == "lazy"
    np.testing.assert_allclose(got.to("cpu").numpy(), want.numpy())


def test_make_fx_and_compile_trace_the_tangent_ops() -> None:
    from ember.fx.experimental.proxy_tensor import make_fx

    def f(x: ember.Tensor) -> ember.Tensor:
        return x.sin() * x.exp()

    x, v = ember.randn(3), ember.randn(3)
    g = make_fx(lambda x, v: ember.func.jvp(f, (x,), (v,)))(x, v)
    targets = [str(n.target) for n in g.graph.nodes if n.op == "call_function"]
    assert targets.count("aten.cos.default") == 1  # sin's tangent formula, as an op
    assert targets.count("aten.add.Tensor") == 1  # the product rule's sum
    want = ember.func.jvp(f, (x,), (v,))[1]
    np.testing.assert_allclose(g(x, v)[1].numpy(), want.numpy(), rtol=1e-6)
    compiled = ember.compile(lambda x, v: ember.func.jvp(f, (x,), (v,))[1])
    np.testing.assert_allclose(compiled(x, v).numpy(), want.numpy(), rtol=1e-6)


def test_views_taken_before_the_base_got_a_tangent_see_it() -> None:
    # NOTE [views of a base with a tangent]: as PyTorch's forward AD
    def run(m: Any) -> list[Any]:
        fw = m.autograd.forward_ad
        seen = []
        with fw.dual_level():
            base = m.zeros(4)
            view, view2 = base[:2], base.view(2, 2)
            base.copy_(fw.make_dual(m.ones(4), m.arange(4.0)))
            seen += [fw.unpack_dual(view).tangent, fw.unpack_dual(view2).tangent]
            seen.append(fw.unpack_dual(view * 3).tangent)  # through an op, not only unpack
            b2 = m.zeros(4)
            v2, w2 = b2[1:3], b2[2:]
            v2.add_(fw.make_dual(m.ones(2), m.full((2,), 5.0)))
            seen += [fw.unpack_dual(b2).tangent, fw.unpack_dual(w2).tangent]
            b3 = m.zeros(3, 2)
            vv3 = b3[0][1:]
            b3.add_(fw.make_dual(m.ones(3, 2), m.ones(3, 2) * 7))
            seen.append(fw.unpack_dual(vv3).tangent.clone())
            b3.mul_(fw.make_dual(m.full((3, 2), 2.0), m.ones(3, 2)))  # the base's tangent
            seen += [fw.unpack_dual(vv3).tangent, fw.unpack_dual(vv3).primal]  # changes
            seen.append(fw.unpack_dual(base.detach()).tangent)  # no view: no tangent
        return seen

    for got, want in zip(run(ember), run(torch), strict=True):
        if want is None:
            assert got is None
        else:
            np.testing.assert_array_equal(got.numpy(), want.numpy())
