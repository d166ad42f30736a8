"""``gradcheck`` / ``gradgradcheck``: analytical gradients vs central finite differences."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember
from ember._tensor import Tensor
from ember.autograd import forward_ad as fwAD
from ember.autograd.api import grad


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when analytical and numerical gradients differ."""


def _outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Tensor]:
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.category >= 2]


def _differentiable(outs: list[Tensor]) -> list[Tensor]:
    """The outputs a gradient can flow from (``total_weight`` of nll_loss does not)."""
    return [o for o in outs if o.requires_grad]


def _numerical(
    fn: Callable[..., Any], inputs: Sequence[Any], i: int, eps: float
) -> list[np.ndarray]:
    """d(each output)/d(input i), one column per input element, by central differences.
    Grad mode stays on: for gradgradcheck, ``fn`` itself computes gradients."""
    x = inputs[i]
    flat = x._edata.reshape(-1) if x._edata.flags.c_contiguous else None
    if flat is None:
        raise ValueError("gradcheck: inputs must be contiguous")
    outs0 = _outputs(fn, inputs)
    jac = [np.zeros((o.numel(), x.numel())) for o in outs0]
    for j in range(x.numel()):
        orig = flat[j].copy()
        flat[j] = orig + eps
        plus = [o._edata.astype(np.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
        flat[j] = orig - eps
        minus = [o._edata.astype(np.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
        flat[j] = orig
        for k in range(len(outs0)):
            jac[k][:, j] = (plus[k] - minus[k]) / (2 * eps)
    return jac


def _analytical(
    fn: Callable[..., Any], inputs: Sequence[Any], diff: list[int]
) -> list[list[np.ndarray]]:
    """jac[output][input]: rows by output element, via one backward per output element."""
    outs = _outputs(fn, inputs)
    result = [[np.zeros((o.numel(), inputs[i].numel())) for i in diff] for o in outs]
    for k, o in enumerate(outs):
        if not o.requires_grad:
            continue  # no gradient flows: its numerical Jacobian must be zero
        for r in range(o.numel()):
            seed = np.zeros(o.numel(), o.dtype.np)
            seed[r] = 1
            gs = grad(o, [inputs[i] for i in diff], ember.from_numpy(seed.reshape(tuple(o.shape))),
                      retain_graph=True, allow_unused=True)  # fmt: skip
            for c, g in enumerate(gs):
                if g is not None:
                    result[k][c][r] = g._edata.astype(np.float64).reshape(-1)
    return result


def forward_jacobian(
    fn: Callable[..., Any], inputs: Sequence[Any], diff: list[int]
) -> list[list[np.ndarray]]:
    """jac[output][input] by forward-mode AD: one ``jvp`` per input element (a basis
    tangent), its output tangents giving one column each."""
    result: list[list[np.ndarray]] | None = None
    # detached: this checks forward mode alone (a formula need not be differentiable again)
    inputs = [x.detach() if isinstance(x, Tensor) else x for x in inputs]
    for c, i in enumerate(diff):
        x = inputs[i]
        for j in range(x.numel()):
            basis = np.zeros(x.numel(), x.dtype.np)
            basis[j] = 1
            with fwAD.dual_level():
                duals = list(inputs)
                tan = ember.from_numpy(basis.reshape(tuple(x.shape)))
                duals[i] = fwAD.make_dual(x, tan)
                outs = _outputs(fn, duals)
                if result is None:
                    result = [[np.zeros((o.numel(), inputs[k].numel())) for k in diff]
                              for o in outs]  # fmt: skip
                for k, o in enumerate(outs):
                    t = fwAD.unpack_dual(o).tangent
                    if t is not None:
                        result[k][c][:, j] = _real_view(t)
    return result or []


def _real_view(t: Tensor) -> np.ndarray:
    """A tangent's values as float64 (a complex one's real part: this check is real)."""
    data = t.detach()._edata
    if np.iscomplexobj(data):
        data = data.real
    return data.astype(np.float64).reshape(-1)


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    **_: Any,
) -> bool:
    """Check the gradients autograd computes for ``func`` against finite differences.
    Use float64 inputs with ``requires_grad=True``. With ``check_forward_ad=True`` the
    Jacobian forward-mode AD computes (one ``jvp`` per input element) is checked too, against
    the finite differences and, when ``check_backward_ad``, the backward-mode Jacobian.

    >>> x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    >>> ember.autograd.gradcheck(lambda x: (x * x).sum(), (x,))
    True
    >>> ember.autograd.gradcheck(lambda x: x.sin(), (x,), check_forward_ad=True)
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i in diff:
        if inputs[i].dtype.name != "float64":
            warnings.warn(
                f"gradcheck: input {i} is {inputs[i].dtype}, not float64; finite differences "
                "will be imprecise", stacklevel=2,
            )  # fmt: skip
    analytical = _analytical(func, inputs, diff) if check_backward_ad else None
    forward = forward_jacobian(func, inputs, diff) if check_forward_ad else None
    for c, i in enumerate(diff):
        numerical = _numerical(func, inputs, i, eps)
        for k, num in enumerate(numerical):
            pairs = []
            if analytical is not None:
                pairs.append(("analytical", analytical[k][c], "numerical", num))
            if forward is not None:
                pairs.append(("forward AD", forward[k][c], "numerical", num))
                if analytical is not None:
                    pairs.append(("forward AD", forward[k][c], "backward AD", analytical[k][c]))
            for name, ana, ref_name, ref in pairs:
                if not np.allclose(ana, ref, atol=atol, rtol=rtol):
                    if raise_exception:
                        raise GradcheckError(
                            f"Jacobian mismatch for output {k} with respect to input {i},\n"
                            f"{ref_name}:{ref}\n{name}:{ana}\n"
                        )
                    return False
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **_: Any,
) -> bool:
    """Check second derivatives: gradcheck of the function's first gradients.

    >>> x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    >>> ember.autograd.gradgradcheck(lambda x: (x * x * x).sum(), (x,))
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    outs = _differentiable(_outputs(func, inputs))
    if grad_outputs is None:  # random, and differentiated too, as PyTorch does
        rng = np.random.default_rng(0)
        draws = [rng.standard_normal(tuple(o.shape)).astype(o.dtype.np) for o in outs]
        grad_outputs = [ember.from_numpy(d).requires_grad_() for d in draws]
    gos = list(grad_outputs) if isinstance(grad_outputs, (list, tuple)) else [grad_outputs]
    n = len(inputs)

    def first_grads(*xs: Any) -> tuple[Any, ...]:
        o = _differentiable(_outputs(func, xs[:n]))
        gs = grad(o, [xs[i] for i in diff], list(xs[n:]), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_grads, (*inputs, *gos), eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
    )
