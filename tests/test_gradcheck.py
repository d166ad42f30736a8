"""Finite-difference checks of every differentiable op, through the shared op samples.

For each op with a derivative formula and float64 samples, ``gradcheck`` compares the
Jacobian autograd computes with central differences; ``gradgradcheck`` does the same for
the first gradients of a representative subset. Unlike ``test_ops.py``'s comparison with
PyTorch, this needs no oracle: it checks the formulas against the forward kernels themselves.

Each floating tensor of a sample becomes a contiguous float64 leaf (``gradcheck`` perturbs
leaves in place); a sample's non-contiguous tensor is rebuilt inside the checked function as
every other element of a leaf twice as wide, so strided inputs are still exercised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
import ember.testing._internal.samples  # noqa: F401  (registers the samples)
from ember.autograd import gradcheck, gradgradcheck
from ember.autograd.derivatives_tensorops import RAISES_AT_BACKWARD
from ember.autograd.function_table import DERIVATIVES
from ember.ops.registry import OpOverload
from ember.testing._internal import opinfo
from ember.testing._internal.opinfo import SampleInput, generate, samples_for
from ember.utils._pytree import tree_leaves

from .conftest import requires_torch, torch

#: samples with more floating elements than this are skipped (gradcheck costs two forward
#: calls per input element and one backward per output element)
MAX_ELEMENTS = 600

#: ops defined (as real functions) only for a positive first input: their samples span
#: [-9, 9], so the first input is moved to |x| + 0.5 for the check
POSITIVE_DOMAIN = {
    "aten.log.default",
    "aten.log2.default",
    "aten.log1p.default",
    "aten.sqrt.default",
    "aten.rsqrt.default",
    "aten.pow.Tensor_Tensor",
    "aten.pow.Tensor_Scalar",
}

#: ops whose later outputs PyTorch declares non-differentiable (``output_differentiability``):
#: only this many leading outputs are checked (ember still marks the others as requiring
#: grad, with a zero gradient: see ``test_nondifferentiable_outputs_do_not_require_grad``)
DIFFERENTIABLE_OUTPUTS = {
    "aten.native_layer_norm.default": 1,  # mean, rstd
    "aten.native_batch_norm.default": 1,  # save_mean, save_invstd
    "aten._linalg_solve_ex.default": 1,  # LU, pivots, info
    "aten._linalg_det.default": 1,  # LU, pivots
    "aten._linalg_slogdet.default": 2,  # LU, pivots
    "aten.linalg_lstsq.default": 2,  # rank, singular_values
    "aten.log_sigmoid_forward.default": 1,  # buffer
    "aten._scaled_dot_product_flash_attention_for_cpu.default": 1,  # logsumexp
}

#: ops whose gradient is, as PyTorch's, deliberately not the derivative of the op alone
NOT_THE_DERIVATIVE = {
    "aten._ctc_loss.default": "PyTorch's gradient is exp(log_probs) - posterior, the "
    "derivative with respect to the logits log_softmax turned into log_probs (checked "
    "against PyTorch's in tests/test_ops.py and tests/test_nn_activation_loss.py)",
}

#: ops that read one triangle of a symmetric input (cholesky, eigh): their gradient is the
#: symmetric one, so the check moves the input along symmetric directions only, ``A + A^T``
#: of the leaf (PyTorch's gradcheck_wrapper_hermitian_input); pinv only with hermitian=True
SYMMETRIC_INPUT = {
    "aten.linalg_cholesky_ex.default", "aten.linalg_cholesky.default", "aten.cholesky.default",
    "aten._linalg_eigh.default", "aten.linalg_eigh.default", "aten.linalg_eigvalsh.default",
    "aten.linalg_pinv.atol_rtol_tensor", "aten.linalg_pinv.atol_rtol_float",
}  # fmt: skip


def _ops() -> list[OpOverload]:
    # (not: ops whose backward raises as PyTorch's does, unique; and random draws, whose
    # gradient is PyTorch's convention, zero, not the derivative of one seeded draw:
    # NOTE [random gradients] in ember/ops/native/random.py)
    return [
        op
        for op in opinfo.tested_overloads()
        if op in DERIVATIVES
        and (info := samples_for(op)) is not None
        and ember.float64 in info.dtypes
        and op not in RAISES_AT_BACKWARD
        and "nondeterministic_seeded" not in op.tags
    ]


# --------------------------------------------------------------------------- leaves


def _floating(x: Any) -> bool:
    return isinstance(x, ember.Tensor) and x.dtype.is_floating_point


def _count(x: Any) -> int:
    if _floating(x):
        return x.numel() * (1 if x.is_contiguous() else 2)
    if isinstance(x, (list, tuple)):
        return sum(_count(e) for e in x)
    if isinstance(x, dict):
        return sum(_count(v) for v in x.values())
    return 0


class _Leaves:
    """The float64 leaves of a sample, and how to rebuild the sample's arguments from them."""

    def __init__(self, sample: SampleInput, *, positive: bool = False) -> None:
        self.sample = sample
        self.leaves: list[ember.Tensor] = []
        self.strided: list[bool] = []
        self.args = self._take(sample.args)
        self.kwargs = self._take(sample.kwargs)
        if positive and self.leaves and isinstance(self.args[0], _Slot):
            data = self.leaves[0].detach().numpy()
            data[...] = np.abs(data) + 0.5  # the leaf owns its buffer: edit it in place

    def finite(self) -> bool:
        """Whether every leaf is finite (differences at NaN or infinity mean nothing)."""
        return all(np.isfinite(leaf.detach().numpy()).all() for leaf in self.leaves)

    def _take(self, x: Any) -> Any:
        if _floating(x):
            arr = np.asarray(x.numpy(), dtype=np.float64)
            strided = not x.is_contiguous() and x.dim() > 0
            if strided:  # every other element of a buffer twice as wide, as the samples do
                big = np.zeros((*arr.shape[:-1], 2 * arr.shape[-1]))
                big[..., ::2] = arr
                arr = big
            self.leaves.append(ember.from_numpy(np.array(arr, order="C")).requires_grad_())
            self.strided.append(strided)
            return _Slot(len(self.leaves) - 1)
        if isinstance(x, (list, tuple)):
            return type(x)(self._take(e) for e in x)
        if isinstance(x, dict):
            return {k: self._take(v) for k, v in x.items()}
        return x

    def rebuild(self, leaves: tuple[ember.Tensor, ...], x: Any) -> Any:
        if isinstance(x, _Slot):
            leaf = leaves[x.index]
            return leaf[..., ::2] if self.strided[x.index] else leaf
        if isinstance(x, (list, tuple)):
            return type(x)(self.rebuild(leaves, e) for e in x)
        if isinstance(x, dict):
            return {k: self.rebuild(leaves, v) for k, v in x.items()}
        return x

    def function(self, op: OpOverload) -> Callable[..., tuple[ember.Tensor, ...]]:
        """``op`` as a function of the leaves, returning its floating outputs."""

        keep = DIFFERENTIABLE_OUTPUTS.get(str(op))
        symmetric = str(op) in SYMMETRIC_INPUT and (
            "pinv" not in str(op) or self.sample.kwargs.get("hermitian", False)
        )

        def fn(*leaves: ember.Tensor) -> tuple[ember.Tensor, ...]:
            ember.manual_seed(0)  # random ops (dropout) draw the same mask every call
            args = self.rebuild(leaves, self.args)
            if symmetric:
                args = (args[0] + args[0].mT, *args[1:])
            out = op(*args, **self.rebuild(leaves, self.kwargs))
            outs = out if isinstance(out, (list, tuple)) else (out,)
            return tuple(o for o in outs[:keep] if _floating(o))

        return fn


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _differentiable(op: OpOverload, sample: Any) -> tuple[_Leaves, Any] | None:
    """The sample's float64 leaves and the op's outputs on them, where there is a derivative
    to check: finite leaves, a call that does not raise, an output that requires grad and
    has elements, and finite outputs; else None."""
    leaves = _Leaves(sample, positive=str(op) in POSITIVE_DOMAIN)
    if not leaves.finite():
        return None  # NaN/infinity samples: no derivative to check there
    try:
        outs = leaves.function(op)(*leaves.leaves)
    except Exception:  # noqa: BLE001 - samples that must raise are test_ops.py's business
        return None
    if not any(o.requires_grad and o.numel() for o in outs):
        return None
    if not all(np.isfinite(o.detach().numpy()).all() for o in outs):
        return None  # a pole (x / 0, var of one element): the derivative is undefined
    return leaves, outs


def _each_case(op: OpOverload, cases: list[_Leaves], check: Any) -> None:
    """``check(function, leaves)`` on every case, failing once with every case that failed."""
    failed = []
    for leaves in cases:
        try:
            check(leaves.function(op), tuple(leaves.leaves))
        except Exception as e:  # noqa: BLE001 - collected, so one run names every bad sample
            failed.append(f"{leaves.sample}: {type(e).__name__}: {str(e)[:2000]}")
    assert not failed, f"{op}: " + "\n".join(failed)


def _checkable(op: OpOverload) -> list[_Leaves]:
    """The op's float64 samples small enough to check, with a differentiable input and a
    floating output."""
    found = []
    for sample in generate(op, ember.float64):
        if not 0 < _count((sample.args, sample.kwargs)) <= MAX_ELEMENTS:
            continue
        checkable = _differentiable(op, sample)
        if checkable is None:
            continue
        leaves, outs = checkable
        if any(o.dtype is not ember.float64 for o in outs):
            continue  # a lower-precision output (_to_copy to float32) swamps the differences
        found.append(leaves)
    return found


# --------------------------------------------------------------------------- gradcheck


@pytest.mark.parametrize("op", _ops(), ids=str)
def test_gradcheck(op: OpOverload) -> None:
    """Autograd's Jacobian of each op equals central finite differences at its samples."""
    if str(op) in NOT_THE_DERIVATIVE:
        pytest.skip(NOT_THE_DERIVATIVE[str(op)])
    cases = _checkable(op)
    if not cases:
        pytest.skip(f"{op}: no float64 sample with a differentiable input and output")
    _each_case(op, cases, gradcheck)


# --------------------------------------------------------------------------- gradgradcheck

#: a representative subset: pointwise, reductions, matrix products, softmax, views, nn ops
GRADGRAD_OPS = [
    "aten.add.Tensor", "aten.mul.Tensor", "aten.div.Tensor", "aten.pow.Tensor_Scalar",
    "aten.pow.Tensor_Tensor", "aten.exp.default", "aten.log.default", "aten.sqrt.default",
    "aten.tanh.default", "aten.sigmoid.default", "aten.sin.default", "aten.relu.default",
    "aten.gelu.default", "aten.silu.default", "aten.clamp.default", "aten.where.self",
    "aten.maximum.default", "aten.atan2.default", "aten.lerp.Tensor", "aten.addcmul.default",
    "aten.sum.dim_IntList", "aten.mean.dim", "aten.prod.dim_int", "aten.amax.default",
    "aten.max.dim", "aten.var.correction", "aten.std.correction", "aten.logsumexp.default",
    "aten.cumsum.default", "aten.cumprod.default", "aten.mm.default", "aten.bmm.default",
    "aten.mv.default", "aten.dot.default", "aten.addmm.default", "aten._softmax.default",
    "aten._log_softmax.default", "aten._softmax_backward_data.default",
    "aten._log_softmax_backward_data.default", "aten.select.int", "aten.slice.Tensor",
    "aten.transpose.int", "aten.permute.default", "aten.expand.default", "aten.view.default",
    "aten.cat.default",
    "aten.gather.default", "aten.index.Tensor", "aten.index_select.default",
    "aten.convolution.default", "aten.native_layer_norm.default",
    "aten.native_batch_norm.default", "aten.avg_pool2d.default",
    "aten.max_pool2d_with_indices.default", "aten.mse_loss.default",
    "aten.binary_cross_entropy_with_logits.default", "aten.nll_loss_forward.default",
    "aten.embedding.default", "aten.constant_pad_nd.default", "aten.gelu_backward.default",
    "aten.tanh_backward.default", "aten.sigmoid_backward.default",
]  # fmt: skip

#: second derivatives ember does not have, with the reason
NO_DOUBLE_BACKWARD: dict[str, str] = {}

#: gradgradcheck differentiates the first gradients once more: fewer elements keep it quick
GRADGRAD_MAX_ELEMENTS = 120


@pytest.mark.parametrize("name", GRADGRAD_OPS)
def test_gradgradcheck(name: str) -> None:
    """The first gradients of each op are themselves differentiable, correctly."""
    if name in NO_DOUBLE_BACKWARD:
        pytest.skip(NO_DOUBLE_BACKWARD[name])
    op = next(o for o in _ops() if str(o) == name)
    cases = [c for c in _checkable(op) if _count(c.leaves) <= GRADGRAD_MAX_ELEMENTS]
    assert cases, f"{op}: no float64 sample small enough for gradgradcheck"
    _each_case(op, cases, gradgradcheck)


def test_single_piece_split_and_unbind() -> None:
    """A ``Tensor[]`` output of one piece: its lone gradient is not iterated over by rows."""
    x = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    y = ember.randn(1, 3, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda x: x.split(3, 1)[0] * x.split(3, 1)[0], (x,))
    assert gradcheck(lambda x: x.split_with_sizes([3], 1)[0].exp(), (x,))
    assert gradcheck(lambda y: y.unbind(0)[0].sin(), (y,))
    assert gradgradcheck(lambda x: ember.cat([x], dim=1).pow(3), (x,))


# --------------------------------------------------------------------------- coverage

#: ops that take floating tensors but have no derivative formula yet (their outputs' grad_fn
#: is a NotImplemented node, whose backward raises "the derivative ... is not implemented")
KNOWN_WITHOUT_DERIVATIVE: set[str] = {
    # PyTorch has no second derivative of grid sampling either ("derivative for
    # aten::grid_sampler_2d_backward is not implemented"); ember raises the same
    "aten.grid_sampler_2d_backward.default",
    "aten.grid_sampler_3d_backward.default",
    # PyTorch does not differentiate these either (its grad_fn is NotImplemented)
    "aten.hardsigmoid_backward.default",
    "aten._ctc_loss_backward.default",
    "aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
    # silu's formula decomposes when it is recorded (create_graph), as PyTorch's
    "aten.silu_backward.default",
}


def test_every_floating_op_has_a_derivative() -> None:
    """An op with float64 samples either differentiates or is declared non-differentiable
    (``rsub.Scalar``, the overload ``1 - x`` dispatches, once had no formula)."""
    from ember.autograd.function_table import NONDIFFERENTIABLE

    missing = []
    for op in opinfo.tested_overloads():
        info = samples_for(op)
        schema = op._schema
        if info is None or ember.float64 not in info.dtypes or schema.is_out:
            continue
        if schema.is_inplace or op in NONDIFFERENTIABLE or opinfo.functional(op) in DERIVATIVES:
            continue  # in-place overloads use their functional op's formula
        for sample in generate(op, ember.float64):
            leaves = _Leaves(sample)
            if not leaves.leaves:
                continue
            try:
                out = leaves.function(op)(*leaves.leaves)
            except Exception:  # noqa: BLE001, S112 - inputs that must raise: test_ops.py's business
                continue
            # NOTE [not implemented derivatives]: the op records a node that raises in backward
            nodes = [t.grad_fn for t in tree_leaves(out) if isinstance(t, ember.Tensor)]
            if any(type(n).__name__ == "NotImplemented" for n in nodes):
                missing.append(str(op))
                break
    assert sorted(set(missing) - KNOWN_WITHOUT_DERIVATIVE) == []
    assert sorted(KNOWN_WITHOUT_DERIVATIVE - set(missing)) == [], "now differentiable: unlist"


def _find(node: Any, kind: str) -> Any:
    """The first node of class ``kind`` in the graph below ``node`` (depth first)."""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if type(n).__name__ == kind:
            return n
        stack.extend(m for m, _ in n.next_functions)
    return None


@requires_torch
def test_a_missing_second_derivative_raises_only_when_reached() -> None:
    """NOTE [not implemented derivatives]: the fused attention backward has no derivative in
    either library; a create_graph backward still works, its node is ``NotImplemented``, and
    only a gradient that reaches it raises."""

    def run(lib: Any) -> tuple[str, list[str]]:
        x = lib.ones(2, 2, 3, 4).mul(0.3).requires_grad_()
        y = lib.nn.functional.scaled_dot_product_attention(x, x.cos(), x.sin())
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        node = _find(g.grad_fn, "NotImplemented")
        assert node is not None
        with pytest.raises(RuntimeError, match="derivative for .*flash_attention_for_cpu_backward"):
            g.sum().backward()
        return node.name(), sorted(type(n).__name__ for n, _ in node.next_functions if n)

    assert run(ember) == run(torch)
