"""Complex autograd: PyTorch's convention, the conjugate Wirtinger derivative.

For a function ``s = f(z)`` and an incoming gradient ``g`` (``∂L/∂s*``), the gradient of a
complex input is ``g * conj(∂s/∂z) + conj(g) * ∂s/∂z*``: ``g * conj(f'(z))`` for a
holomorphic ``f``. A real input takes the real part of that.

Two checks over every op with a derivative (or a decomposition: ``real``, ``conj``) and
complex samples, built from the shared op samples as ``tests/test_ops.py`` and
``tests/test_gradcheck.py`` build theirs for float64:
the gradients for complex128 inputs and a random complex cotangent ``v`` equal PyTorch's,
and they equal central differences of ``L = Re(sum(conj(v) * f(z)))`` along the real and the
imaginary direction of every input element (``ember.autograd.gradcheck`` perturbs the real
part only, so it cannot check complex inputs).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
import ember.testing._internal.samples  # noqa: F401  (registers the samples)
from ember.autograd.derivatives import conj, real
from ember.autograd.derivatives_tensorops import RAISES_AT_BACKWARD
from ember.autograd.function_table import DERIVATIVES
from ember.dispatch.keys import DispatchKey
from ember.ops.registry import OpOverload
from ember.testing._internal import opinfo
from ember.testing._internal.opinfo import (
    SampleInput,
    assert_grads_match,
    generate,
    grad_leaves,
    samples_for,
    to_torch,
    torch_grad_leaves,
    torch_leaves,
    torch_op,
)

from .conftest import requires_torch, torch

#: samples with more differentiable elements than this skip the finite differences (four
#: forward calls per element)
MAX_ELEMENTS = 200
#: composite ops whose backward is that of an op whose backward raises
_COMPOSITE_OF = {
    ember.ops.aten.linalg_ldl_factor.default: (ember.ops.aten.linalg_ldl_factor_ex.default,)
}
DOUBLE = (ember.float64, ember.complex128)


def _complex_ops() -> list[OpOverload]:
    """Ops with a derivative or a decomposition (``real``, ``conj``: their parts' derivatives)
    and complex samples."""
    return [
        op
        for op in opinfo.tested_overloads()
        if (op in DERIVATIVES or DispatchKey.CompositeImplicitAutograd in op._kernels)
        # not the ones whose backward raises, as PyTorch's (ldl_factor: no derivative)
        and op not in RAISES_AT_BACKWARD
        and not any(part in RAISES_AT_BACKWARD for part in _COMPOSITE_OF.get(op, ()))
        # not in-place and out= ops (an alias's arcsin_ has a decomposition): their gradient
        # is their functional op's, checked here through it
        and not op._schema.is_mutable
        and (info := samples_for(op)) is not None
        and any(d.is_complex for d in info.dtypes)
    ]


OPS = _complex_ops()


def _samples(op: OpOverload) -> list[SampleInput]:
    """The op's samples made with complex128 (ops sampled only in complex64 included)."""
    return list(generate(op, ember.complex128))


def _floating(x: Any) -> bool:
    """A floating or complex tensor: one that can require grad."""
    return isinstance(x, ember.Tensor) and x.dtype.category >= ember.dtypes.FLOATING


def _with_grad(x: Any) -> Any:
    if _floating(x):
        return opinfo.clone_args(x).requires_grad_()
    if isinstance(x, list):
        return [_with_grad(e) for e in x]
    return x


def _outputs(out: Any) -> list[ember.Tensor]:
    outs = out if isinstance(out, (list, tuple)) else [out]
    return [o for o in outs if isinstance(o, ember.Tensor) and o.requires_grad]


def _cotangent(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    draw = rng.standard_normal(shape)
    if dtype.is_complex:
        draw = draw + 1j * rng.standard_normal(shape)
    return np.asarray(draw).astype(dtype.np)


def _run(
    op: OpOverload, sample: SampleInput, hermitian: bool = False
) -> tuple[Any, list[Any], list[Any]] | None:
    """(args with leaves, ember outputs, cotangents), or None when ember refuses the sample
    or no output carries a gradient (``hermitian``: through ``HERMITIAN_INPUT``'s wrapper)."""
    args = tuple(_with_grad(a) for a in sample.args)
    if not grad_leaves(args):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # complex-to-real casts (copy into a real tensor)
            called = _hermitian(op, args, sample.kwargs) if hermitian else args
            outs = _outputs(op(*called, **sample.kwargs))
    except Exception:  # noqa: BLE001 - error parity is test_ops.py's job
        return None
    if not outs:
        return None
    rng = np.random.default_rng(1)
    cots = [_cotangent(rng, tuple(o.shape), o.dtype) for o in outs]
    return args, outs, cots


# --------------------------------------------------------------------------- vs PyTorch

#: ops PyTorch cannot differentiate at all; not even called, as its deprecation warning for
#: scatter(reduce=) is shown once per process and test_derivatives_extra.py expects to see it
TORCH_NO_DERIVATIVE = {
    "aten.scatter.reduce": "PyTorch: derivative for aten::scatter is not implemented",
    "aten.scatter.value_reduce": "PyTorch: derivative for aten::scatter is not implemented",
}

#: samples where PyTorch's complex gradient is wrong (its own gradcheck fails), so it is no
#: oracle; the finite differences below check ember's
TORCH_GRADIENT_WRONG: dict[str, tuple[Callable[[SampleInput], bool], str]] = {
    "aten.cumprod.default": (
        lambda s: s.kwargs.get("dtype") is not None and not s.kwargs["dtype"].is_complex,
        "cumprod(complex, dtype=<real>) differentiates through the imaginary part it drops",
    ),
    "aten.ldexp.Tensor": (
        lambda s: True,
        "ldexp's gradient for negative integer exponents is 0 (its int pow; docs/fidelity.md)",
    ),
    "aten.as_strided_scatter.default": (
        lambda s: True,
        "PyTorch's gradient for self fails its own gradcheck (docs/fidelity.md)",
    ),
}


@requires_torch
@pytest.mark.parametrize("op", OPS, ids=str)
def test_complex_gradients_match_torch(op: OpOverload) -> None:
    """Backward through each op for complex128 inputs equals PyTorch's."""
    if str(op) in TORCH_NO_DERIVATIVE:
        pytest.skip(f"{op}: {TORCH_NO_DERIVATIVE[str(op)]}")
    ran = refused = 0
    wrong = TORCH_GRADIENT_WRONG.get(str(op))
    for sample in _samples(op):
        if wrong is not None and wrong[0](sample):
            continue  # test_complex_gradients_match_finite_differences checks ember's
        run = _run(op, sample)
        if run is None:
            continue
        args, outs, cots = run
        t_args = tuple(torch_leaves(a) for a in args)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_out = torch_op(op, samples_for(op))(*t_args, **to_torch(sample.kwargs))
            t_outs = [o for o in (t_out if isinstance(t_out, (list, tuple)) else [t_out])
                      if isinstance(o, torch.Tensor) and o.requires_grad]  # fmt: skip
            t_grads = torch.autograd.grad(
                t_outs, torch_grad_leaves(t_args), [torch.from_numpy(c) for c in cots],
                allow_unused=True,
            )  # fmt: skip
        except RuntimeError:
            refused += 1  # PyTorch has no complex kernel or no complex derivative here
            continue
        e_grads = ember.autograd.grad(
            outs, grad_leaves(args), [ember.from_numpy(c) for c in cots], allow_unused=True
        )
        assert_grads_match(e_grads, t_grads, f"{op} {sample}", check_dtype=True)
        ran += 1
    if not ran:
        pytest.skip(f"{op}: no complex sample both ember and PyTorch differentiate ({refused})")


# --------------------------------------------------------------------------- finite differences


def _substitute(x: Any, new: dict[int, ember.Tensor]) -> Any:
    if isinstance(x, ember.Tensor):
        return new.get(id(x), x)
    if isinstance(x, (list, tuple)):
        return type(x)(_substitute(e, new) for e in x)
    return x


#: ops that read one triangle of a Hermitian input (cholesky, eigh; pinv with hermitian=True):
#: their gradient is the Hermitian one, so the differences move the input along Hermitian
#: directions only, ``A + A^H`` of the leaf (PyTorch's gradcheck_wrapper_hermitian_input)
HERMITIAN_INPUT = {
    "aten.linalg_cholesky_ex.default", "aten.linalg_cholesky.default", "aten.cholesky.default",
    "aten.linalg_eigvalsh.default",
}  # fmt: skip

#: ops whose complex outputs are defined up to a phase per column (singular and eigen
#: vectors): a random cotangent makes a loss that depends on that choice, with no derivative
#: (PyTorch's svd_backward refuses such losses); tests/test_linalg_namespace.py checks them
#: on phase-free losses against PyTorch instead
PHASE_DEPENDENT = {
    "aten._linalg_svd.default", "aten.linalg_svd.default", "aten.svd.default",
    "aten._linalg_eigh.default", "aten.linalg_eigh.default",
}  # fmt: skip


def _hermitian(op: OpOverload, args: Any, kwargs: dict[str, Any]) -> Any:
    hermitian_pinv = "pinv" in str(op) and kwargs.get("hermitian", False)
    if str(op) not in HERMITIAN_INPUT and not hermitian_pinv:
        return args
    a = args[0]
    return (a + conj(a.transpose(-2, -1)), *args[1:])


def _loss(
    op: OpOverload, args: Any, kwargs: dict[str, Any], cots: list[np.ndarray], new: dict
) -> float:
    """``Re(sum(conj(v) * f))`` over the outputs that carry a gradient (those ``_outputs``
    picks: an LU factor after a determinant carries none, nor ``lu_unpack``'s leading ``P``),
    with some leaves replaced by ``new``."""
    new = {k: v.detach().requires_grad_() for k, v in new.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = _outputs(op(*_hermitian(op, _substitute(args, new), kwargs), **kwargs))
    return float(
        sum(np.real(np.conj(v) * o.detach().numpy()).sum() for o, v in zip(outs, cots, strict=True))
    )


def _numerical(
    op: OpOverload, args: Any, kwargs: dict[str, Any], cots: list[np.ndarray], leaf: Any
) -> np.ndarray:
    """``∂L/∂x + i ∂L/∂y`` for each element ``x + iy`` of ``leaf`` (``∂L/∂x`` if real)."""
    eps = 1e-6
    directions = (1.0, 1j) if leaf.dtype.is_complex else (1.0,)
    grad = np.zeros(tuple(leaf.shape), dtype=leaf.dtype.np)
    for idx in np.ndindex(*leaf.shape):
        for d in directions:
            diffs = []
            for sign in (1, -1):
                moved = opinfo.clone_args(leaf.detach())  # same strides (as_strided cares)
                moved._edata[idx] += sign * eps * d
                diffs.append(_loss(op, args, kwargs, cots, {id(leaf): moved}))
            grad[idx] += d * (diffs[0] - diffs[1]) / (2 * eps)
    return grad


def _finite(args: Any) -> bool:
    return all(np.isfinite(t.detach().numpy()).all() for t in grad_leaves(args))


@pytest.mark.parametrize("op", OPS, ids=str)
def test_complex_gradients_match_finite_differences(op: OpOverload) -> None:
    """Each op's complex gradient is the conjugate Wirtinger derivative, by differences."""
    if "nondeterministic_seeded" in op.tags:
        pytest.skip(f"{op}: a random draw's gradient is PyTorch's convention (zero), not a "
                    "difference of two draws (NOTE [random gradients])")  # fmt: skip
    if str(op) in PHASE_DEPENDENT:
        pytest.skip(f"{op}: complex outputs defined up to a phase (see PHASE_DEPENDENT)")
    ran = 0
    failed = []
    for sample in _samples(op):
        run = _run(op, sample, hermitian=True)
        if run is None:
            continue
        args, outs, cots = run
        leaves = grad_leaves(args)
        if sum(t.numel() for t in leaves) > MAX_ELEMENTS or not _finite(args):
            continue
        if any(t.dtype not in DOUBLE for t in (*leaves, *outs)):
            continue  # single or half precision swamps the differences
        if not all(np.isfinite(o.detach().numpy()).all() for o in outs):
            continue  # a pole: no derivative to check
        grads = ember.autograd.grad(
            outs, leaves, [ember.from_numpy(c) for c in cots], allow_unused=True
        )
        for i, (leaf, g) in enumerate(zip(leaves, grads, strict=True)):
            num = _numerical(op, args, sample.kwargs, cots, leaf)
            ana = np.zeros_like(num) if g is None else g.numpy()
            scale = max(1.0, float(np.abs(num).max(initial=0.0)))
            if not np.allclose(ana, num, rtol=1e-4, atol=1e-5 * scale):
                failed.append(f"{sample} input {i}:\nnumerical {num}\nanalytical {ana}")
        ran += 1
    if not ran:
        pytest.skip(f"{op}: no finite complex sample with a differentiable input and output")
    assert not failed, f"{op}: " + "\n".join(failed)


# --------------------------------------------------------------------------- mixed real/complex


def _mixed_cases() -> list[tuple[str, Callable[..., Any]]]:
    return [
        ("to_complex", lambda x, z, m: m.ops.aten._to_copy.default(x, dtype=z.dtype)),
        ("mul_scalar", lambda x, z, m: x * (1.5 - 2j)),
        ("mul", lambda x, z, m: x * z),
        ("add_alpha", lambda x, z, m: m.add(z, x, alpha=2 - 1j)),
        ("div", lambda x, z, m: z / (x + 10)),
        ("pow", lambda x, z, m: (x.abs() + 1).pow(z * 0.1)),
        ("cat", lambda x, z, m: m.cat([x, z])),
    ]


def _mixed(module: Any) -> tuple[Any, Any]:
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (4,))
    z = rng.uniform(-2, 2, (4,)) + 1j * rng.uniform(-2, 2, (4,))
    if module is ember:
        return ember.from_numpy(x).requires_grad_(), ember.from_numpy(z).requires_grad_()
    return torch.from_numpy(x).requires_grad_(), torch.from_numpy(z).requires_grad_()


@requires_torch
@pytest.mark.parametrize("case", _mixed_cases(), ids=lambda c: c[0])
def test_real_input_gets_the_real_part(case: tuple[str, Callable[..., Any]]) -> None:
    """A real input of a complex-valued op gets the real part of its complex gradient."""
    _, fn = case
    rng = np.random.default_rng(4)
    x, z = _mixed(ember)
    tx, tz = _mixed(torch)
    out, t_out = fn(x, z, ember), fn(tx, tz, torch)
    v = rng.standard_normal(tuple(out.shape)) + 1j * rng.standard_normal(tuple(out.shape))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # see test_real_input_gets_no_cast_warning
        gx, gz = ember.autograd.grad(out, [x, z], ember.from_numpy(v), allow_unused=True)
    tgx, tgz = torch.autograd.grad(t_out, [tx, tz], torch.from_numpy(v), allow_unused=True)
    assert gx.dtype is ember.float64
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-6, atol=1e-8)
    if tgz is None:
        assert gz is None or not gz.numpy().any()
    else:
        np.testing.assert_allclose(gz.numpy(), tgz.numpy(), rtol=1e-6, atol=1e-8)


def test_real_input_gets_no_cast_warning() -> None:
    """The engine takes the real part of a complex gradient for a real input (``real``), as
    PyTorch does, instead of casting it with ``.to()``, which warns."""
    x = ember.tensor([1.0, -2.0], dtype=ember.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (g,) = ember.autograd.grad(x * (1 + 2j), x, ember.tensor([1 + 1j, 2 - 1j]))
    assert g.dtype is ember.float64
    assert g.tolist() == [3.0, 0.0]  # Re((1+1j) * (1-2j)) = Re(3-1j), Re((2-1j) * (1-2j)) = Re(-5j)


# --------------------------------------------------------------------------- higher order


def _second_order(module: Any, fn: Callable[..., Any]) -> list[Any]:
    """Gradients, for ``z`` and ``v``, of a first gradient of ``fn(z, v)`` (create_graph)."""
    rng = np.random.default_rng(5)

    def draw(shape: tuple[int, ...]) -> Any:
        d = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
        return ember.from_numpy(d) if module is ember else torch.from_numpy(d)

    z, v = draw((3, 3)).requires_grad_(), draw((3, 3)).requires_grad_()
    out = fn(z, v)
    (gz,) = module.autograd.grad(out, z, draw(tuple(out.shape)), create_graph=True)
    grads = module.autograd.grad(gz, [z, v], draw((3, 3)), allow_unused=True)
    if module is ember:
        return [None if g is None else g.numpy() for g in grads]
    return [None if g is None else g.detach().resolve_conj().numpy() for g in grads]


SECOND_ORDER = {
    "mul": lambda z, v: z * v,
    "exp": lambda z, v: z.exp() * v,
    "mm": lambda z, v: z.mm(v),
    "div": lambda z, v: z / v,
    "abs": lambda z, v: z.abs() * z,
    "sqrt_log": lambda z, v: (z + 3).sqrt() * (v + 3).log(),
    "pow": lambda z, v: z.pow(3) * v,
    "reciprocal_tanh": lambda z, v: (v + 3).reciprocal() * z.tanh(),
    "logsumexp": lambda z, v: z.logsumexp(0) * v[0],  # no complex samples: checked here
    "conv2d": lambda z, v: _conv2d(z.reshape(1, 1, 3, 3), v[:2, :2].reshape(1, 1, 2, 2)),
    "real_imag": lambda z, v: z.real * z.imag * v,  # view_as_real and select, twice
    "conj": lambda z, v: z.conj() * z * v,
    "conj_physical": lambda z, v: z.conj_physical() * v.conj_physical() * z,
}


def _conv2d(x: Any, w: Any) -> Any:
    functional = ember.nn.functional if isinstance(x, ember.Tensor) else torch.nn.functional
    return functional.conv2d(x, w, padding=1)


@requires_torch
@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_complex_double_backward_matches_torch(name: str) -> None:
    """Gradients of complex gradients (create_graph) equal PyTorch's: conj differentiates."""
    fn = SECOND_ORDER[name]
    got, want = _second_order(ember, fn), _second_order(torch, fn)
    for g, t in zip(got, want, strict=True):
        if t is None:
            assert g is None or not g.any()
            continue
        assert g is not None
        np.testing.assert_allclose(g, t, rtol=1e-6, atol=1e-8)


#: in-place writes through ``z.real`` / ``z.imag`` (real views of a complex base, whose region
#: CopySlices locates in real elements: NOTE [in-place on a view]), on ``y = z * 1`` of shape
#: (3, 4) with a real ``w`` of shape (3, 4); each returns a real scalar
IN_PLACE_PARTS: dict[str, Callable[[Any, Any], Any]] = {
    "real_mul_": lambda y, w: (y.real.mul_(w), (y * y).sum().abs())[1],
    "imag_add_": lambda y, w: (y.imag.add_(1), (y * y * w).sum().abs())[1],
    "real_setitem": lambda y, w: (y.real.__setitem__(0, w[1] * w[2]), (y * y).sum().abs())[1],
    "imag_of_row": lambda y, w: (y[1].imag.mul_(w[0]), (y * y.exp()).sum().abs())[1],  # offset
    "row_of_imag": lambda y, w: (y.imag[2].div_(w[0] + 3), (y * y).sum().abs())[1],
    "imag_of_transposed": lambda y, w: (y.t().imag.mul_(w.t()), (y * y).sum().abs())[1],
    "imag_pow_": lambda y, w: (y.imag.pow_(2), (y.exp() * w).sum().abs())[1],
    "view_used_after": lambda y, w: _used_after(y, w),
    "two_writes": lambda y, w: (y.imag.mul_(w), y.real.add_(y.imag), (y * y).sum().abs())[2],
}


def _used_after(y: Any, w: Any) -> Any:
    r = y.real
    r.mul_(w)
    return (r * r * w).sum() + (y * y).sum().abs()


def _part_gradients(module: Any, fn: Callable[[Any, Any], Any], order: int) -> list[Any]:
    """Gradients of ``fn(z * 1, w)`` for z and w; for order 2, those of the squared norm of
    the first gradients (through create_graph)."""
    rng = np.random.default_rng(3)
    shape = (3, 4)
    z = module.from_numpy(rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape))
    w = module.from_numpy(rng.uniform(-1, 1, shape))
    z, w = z.requires_grad_(), w.requires_grad_()
    grads = module.autograd.grad(fn(z * 1, w), [z, w], create_graph=order == 2)
    if order == 2:
        norm = sum(((g.abs() ** 2).sum() for g in grads), module.zeros(()))
        grads = module.autograd.grad(norm, [z, w], allow_unused=True)
    if module is ember:
        return [None if g is None else g.numpy() for g in grads]
    return [None if g is None else g.detach().numpy() for g in grads]


@requires_torch
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name", sorted(IN_PLACE_PARTS))
def test_in_place_through_a_part_matches_torch(name: str, order: int) -> None:
    """An in-place op through ``z.real``/``z.imag`` on a tensor that requires grad: gradients
    (and, through create_graph, second derivatives) equal PyTorch's."""
    fn = IN_PLACE_PARTS[name]
    got, want = _part_gradients(ember, fn, order), _part_gradients(torch, fn, order)
    for g, t in zip(got, want, strict=True):
        assert (g is None) == (t is None)
        if t is not None:
            assert g.dtype == t.dtype
            np.testing.assert_allclose(g, t, rtol=1e-6, atol=1e-10)


# --------------------------------------------------------------------------- entry points


def test_backward_of_complex_output_needs_a_gradient() -> None:
    z = ember.tensor([1 + 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar"):
        (z * z).sum().backward()
    (z * z).sum().abs().backward()  # a real output needs none
    assert z.grad is not None and z.grad.dtype is ember.complex64
    # sgn(z²) * conj(2z) = (-3+4j)/5 * (2-4j)
    np.testing.assert_allclose(z.grad.numpy(), [2 + 4j], rtol=1e-6)


def test_conj_and_real_are_free_for_real_tensors() -> None:
    """Real training pays nothing: the helpers return a real tensor itself."""
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    assert conj(x) is x
    assert real(x) is x


def test_conj_and_real_values() -> None:
    z = ember.from_numpy(np.array([[1 + 2j, -3 - 0.5j], [0j, np.inf - 1j]])).t()
    np.testing.assert_array_equal(conj(z).numpy(), np.conj(z.numpy()))
    np.testing.assert_array_equal(real(z).numpy(), np.real(z.numpy()))
    assert real(z).dtype is ember.float64
    s = ember.tensor(2 - 1j)
    assert conj(s).item() == 2 + 1j and real(s).item() == 2.0
