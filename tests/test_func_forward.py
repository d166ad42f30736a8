"""ember.func's forward-mode transforms (jvp, linearize, jacfwd, hessian) against torch.func,
in the style of PyTorch's test/functorch/test_eager_transforms.py: argnums, has_aux, pytree
inputs and outputs, nesting, and composition with vmap and reverse mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import ember
import ember.func as ef


def _both(*shape: int, seed: int = 0) -> tuple[ember.Tensor, torch.Tensor]:
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _same(e: Any, t: Any) -> None:
    """Same pytree structure and values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), type(e)
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-11)
    elif isinstance(t, dict):
        assert set(e) == set(t)
        for k in t:
            _same(e[k], t[k])
    else:
        assert type(e) is type(t) and len(e) == len(t), (type(e), type(t))
        for a, b in zip(e, t, strict=True):
            _same(a, b)


def _f(lib: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        return (x.sin() * y).sum(-1), lib.tanh(x @ y.T)

    return f


def test_jvp_matches_torch() -> None:
    x, tx = _both(3, 4)
    y, ty = _both(3, 4, seed=1)
    u, tu = _both(3, 4, seed=2)
    v, tv = _both(3, 4, seed=3)
    _same(ef.jvp(_f(ember), (x, y), (u, v)), tf.jvp(_f(torch), (tx, ty), (tu, tv)))


def test_jvp_pytrees_and_aux() -> None:
    x, tx = _both(2, 3)
    u, tu = _both(2, 3, seed=1)

    def g(lib: Any) -> Any:
        def fn(d: Any) -> Any:
            out = {"a": d["p"].exp(), "b": [d["p"].sum(), d["q"] * 2]}
            return out, d["p"].cos()

        return fn

    e = ef.jvp(g(ember), ({"p": x, "q": x},), ({"p": u, "q": u},), has_aux=True)
    t = tf.jvp(g(torch), ({"p": tx, "q": tx},), ({"p": tu, "q": tu},), has_aux=True)
    _same(e, t)
    assert ember.autograd.forward_ad.unpack_dual(e[2]).tangent is None


def test_jvp_errors() -> None:
    x = ember.ones(2)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        ef.jvp(ember.sin, x, (x,))
    with pytest.raises(RuntimeError, match="same python structure"):
        ef.jvp(lambda a, b: a * b, (x, x), (x,))
    with pytest.raises(RuntimeError, match="same shape"):
        ef.jvp(ember.sin, (x,), (ember.ones(3),))
    with pytest.raises(RuntimeError, match="only tensors"):
        ef.jvp(lambda a: 1.0, (x,), (x,))


def test_nested_jvp_is_the_second_derivative() -> None:
    x, tx = _both(4)

    def second(lib: Any, jvp: Any) -> Any:
        def d1(z: Any) -> Any:
            return jvp(lambda w: (w**3).exp() * w, (z,), (lib.ones_like(z),))[1]

        return lambda z: jvp(d1, (z,), (lib.ones_like(z),))[1]

    _same(second(ember, ef.jvp)(x), second(torch, tf.jvp)(tx))


def test_linearize_matches_torch() -> None:
    x, tx = _both(5)
    u, tu = _both(5, seed=1)
    out, fn = ef.linearize(lambda z: z.sin().cumsum(0), x)
    tout, tfn = tf.linearize(lambda z: z.sin().cumsum(0), tx)
    _same(out, tout)
    _same(fn(u), tfn(tu))
    _same(fn(u * 2), tfn(tu * 2))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,)])
def test_jacfwd_argnums(argnums: Any) -> None:
    x, tx = _both(3, 2)
    y, ty = _both(3, 2, seed=1)
    _same(ef.jacfwd(_f(ember), argnums)(x, y), tf.jacfwd(_f(torch), argnums)(tx, ty))


def test_jacfwd_pytree_input_and_aux() -> None:
    x, tx = _both(2, 3)
    b, tb = _both(3, seed=1)

    def g(lib: Any) -> Any:
        return lambda d: ((d["w"] @ d["b"]).sin(), {"n": d["b"].sum()})

    _same(ef.jacfwd(g(ember), has_aux=True)({"w": x, "b": b}),
          tf.jacfwd(g(torch), has_aux=True)({"w": tx, "b": tb}))  # fmt: skip


def test_jacfwd_equals_reverse_jacobian() -> None:
    x, tx = _both(6)
    w, tw = _both(6, 6, seed=1)

    def g(lib: Any, w: Any) -> Any:
        return lambda z: lib.nn.functional.softmax(w @ z.tanh(), 0) * z.norm()

    _same(ef.jacfwd(g(ember, w))(x), tf.jacrev(g(torch, tw))(tx))


def test_jacfwd_argnums_errors() -> None:
    x = ember.ones(2)
    with pytest.raises(RuntimeError, match="only 1 positional inputs"):
        ef.jacfwd(ember.sin, argnums=1)(x)
    with pytest.raises(RuntimeError, match="must be int or Tuple"):
        ef.jacfwd(ember.sin, argnums=0.5)(x)  # type: ignore[arg-type]


def test_hessian_matches_torch() -> None:
    x, tx = _both(4)
    y, ty = _both(4, seed=1)

    def g(lib: Any) -> Any:
        return lambda a, b: (a * b).sin().sum() + (a**2 * b.exp()).sum()

    _same(ef.hessian(g(ember))(x, y), tf.hessian(g(torch))(tx, ty))
    _same(ef.hessian(g(ember), argnums=(0, 1))(x, y), tf.hessian(g(torch), argnums=(0, 1))(tx, ty))


def test_vmap_of_jvp_and_jvp_of_vmap() -> None:
    x, tx = _both(5, 3)
    u, tu = _both(5, 3, seed=1)
    w, tw = _both(3, 2, seed=2)

    def g(lib: Any, w: Any) -> Any:
        return lambda z: (z @ w).relu().exp().sum()

    per_row = ef.vmap(lambda a, b: ef.jvp(g(ember, w), (a,), (b,)))(x, u)
    t_per_row = tf.vmap(lambda a, b: tf.jvp(g(torch, tw), (a,), (b,)))(tx, tu)
    _same(per_row, t_per_row)
    _same(ef.jvp(ef.vmap(g(ember, w)), (x,), (u,)), tf.jvp(tf.vmap(g(torch, tw)), (tx,), (tu,)))


def test_jacfwd_of_a_module_through_functional_call() -> None:
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    tnet = tnet.double()
    net = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 2))
    net = net.double()
    net.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                         for k, v in tnet.state_dict().items()})  # fmt: skip
    x, tx = _both(2, 3)
    params = {k: v.detach() for k, v in net.named_parameters()}
    tparams = {k: v.detach() for k, v in tnet.named_parameters()}
    e = ef.jacfwd(lambda p: ef.functional_call(net, p, (x,)))(params)
    t = tf.jacfwd(lambda p: tf.functional_call(tnet, p, (tx,)))(tparams)
    _same(e, t)


def test_jacfwd_of_reverse_mode_when_jacrev_exists() -> None:
    if not hasattr(ef, "jacrev"):
        pytest.skip("ember.func.jacrev is not in this tree yet (the vmap helper's transform)")
    x, tx = _both(4)

    def g(lib: Any) -> Any:
        return lambda z: (z.sin() * z.exp()).sum()

    _same(ef.jacfwd(ef.jacrev(g(ember)))(x), tf.jacfwd(tf.jacrev(g(torch)))(tx))
    _same(ef.jacrev(ef.jacfwd(g(ember)))(x), tf.jacrev(tf.jacfwd(g(torch)))(tx))


#: ops whose registry samples the op-by-op check cannot use (complex outputs, NaN or
#: out-of-domain values, large 3-d inputs), checked here against torch.func.jvp instead
_SMALL_CASES = {
    "complex": lambda lib, x: lib.complex(x, x.flip(-1) * 2),
    "polar": lambda lib, x: lib.polar(x.abs() + 0.5, x),
    "view_as_complex": lambda lib, x: lib.view_as_complex(x.reshape(-1, 2)) * 1j,
    "rfft": lambda lib, x: lib.fft.rfft(x.reshape(-1)),
    "nan_to_num": lambda lib, x: lib.nan_to_num(x.log(), nan=0.5, neginf=-2.0),
    "ndtri": lambda lib, x: lib.special.ndtri(x.sigmoid()),
    "avg_pool3d": lambda lib, x: lib.nn.functional.avg_pool3d(x.reshape(1, 1, 2, 2, 3), 2, 1),
    "max_pool3d": lambda lib, x: lib.nn.functional.max_pool3d(x.reshape(1, 1, 2, 2, 3), 2, 1),
    "adaptive_avg_pool3d": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(
        x.reshape(1, 1, 2, 2, 3), (1, 2, 2)),
    "adaptive_max_pool3d": lambda lib, x: lib.nn.functional.adaptive_max_pool3d(
        x.reshape(1, 1, 2, 2, 3), (1, 2, 2)),
    "upsample_nearest3d": lambda lib, x: lib.nn.functional.interpolate(
        x.reshape(1, 1, 2, 2, 3), scale_factor=2, mode="nearest"),
    "upsample_trilinear3d": lambda lib, x: lib.nn.functional.interpolate(
        x.reshape(1, 1, 2, 2, 3), scale_factor=2, mode="trilinear"),
    "reflection_pad3d": lambda lib, x: lib.nn.functional.pad(
        x.reshape(1, 1, 2, 2, 3), (1, 1, 1, 1, 1, 1), mode="reflect"),
    "replication_pad3d": lambda lib, x: lib.nn.functional.pad(
        x.reshape(1, 1, 2, 2, 3), (1, 1, 1, 1, 1, 1), mode="replicate"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(_SMALL_CASES))
def test_jvp_of_ops_without_usable_samples(name: str) -> None:
    x, tx = _both(12)
    u, tu = _both(12, seed=1)
    fn = _SMALL_CASES[name]
    _same(ef.jvp(lambda z: fn(ember, z), (x,), (u,)), tf.jvp(lambda z: fn(torch, z), (tx,), (tu,)))


def test_linearize_does_not_run_the_function_again() -> None:
    # NOTE [linearize]: jvp_fn runs only the tangent computation (no sin of the primal)
    from ember.utils._python_dispatch import TorchDispatchMode

    calls = []

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            calls.append(func.__name__)
            return func(*args, **(kwargs or {}))

    count = [0]

    def f(z: Any, w: dict[str, Any]) -> Any:
        count[0] += 1
        return {"a": (z.sin() * w["k"]).exp(), "b": z.cumsum(0)}

    x, tx = _both(4)
    k, tk = _both(4, seed=2)
    u, tu = _both(4, seed=1)
    out, fn = ef.linearize(f, x, {"k": k})
    tout, tfn = tf.linearize(f, tx, {"k": tk})
    _same(out, tout)
    runs = count[0]
    with Ops():
        got = fn(u, {"k": u * 3})
    assert count[0] == runs
    assert not {"sin.default", "exp.default"} & set(calls), calls
    _same(got, tfn(tu, {"k": tu * 3}))
    _same(fn(u * 2, {"k": u}), tfn(tu * 2, {"k": tu}))


def test_linearize_checks_its_tangents_as_torch() -> None:
    x, tx = _both(3)
    _, fn = ef.linearize(ember.sin, x)
    _, tfn = tf.linearize(torch.sin, tx)
    cases = [
        ("shape", ember.ones(4, dtype=ember.float64), torch.ones(4, dtype=torch.float64)),
        ("dtype", ember.ones(3), torch.ones(3)),
    ]
    for what, bad, tbad in cases:
        pattern = f"tangent:0 with {what} .* doesn't match the {what} .* corresponding primal"
        with pytest.raises(RuntimeError, match=pattern):
            tfn(tbad)
        with pytest.raises(RuntimeError, match=pattern):
            fn(bad)
    with pytest.raises(RuntimeError, match="same argspec"):
        fn(ember.ones(3, dtype=ember.float64), ember.ones(3))
