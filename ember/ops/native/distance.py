"""Distances and the bilinear form, which PyTorch defines as compositions of other ops
(CompositeImplicitAutograd): ``cosine_similarity``, ``pairwise_distance``, ``bilinear``,
``pdist`` (NOTE [pdist]).
Their parts are what autograd, ``__torch_dispatch__`` code and the lazy device see."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ember.dispatch.keys import DispatchKey
from ember.dispatch.state import GradKeyGuard
from ember.dtypes import result_type
from ember.ops.native._define import define
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_FN = ("function",)
for _schema in (
    "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor",
    "pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) "
    "-> Tensor",
    "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor",
    "pdist(Tensor self, float p=2) -> Tensor",
):
    define(_schema, variants=_FN)

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


def broadcast_shape(a: Sequence[int], b: Sequence[int], op: str) -> list[int]:
    """The broadcast of two shapes; RuntimeError naming ``op`` when they clash."""
    out = []
    for x, y in itertools.zip_longest(reversed(a), reversed(b), fillvalue=1):
        if x != y and 1 not in (x, y):
            raise RuntimeError(
                f"{op}: The size of tensor a ({x}) must match the size of tensor b ({y}); "
                f"shapes {list(a)} and {list(b)} cannot broadcast"
            )
        out.append(y if x == 1 else x)
    return out[::-1]


@impl(aten.cosine_similarity.default, _CIA)
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    # NOTE [cosine similarity]: as PyTorch, each input is divided by its own norm, clamped
    # to eps, and the normalized vectors' products summed (|result| <= 1, and |x1| |x2| is
    # never formed, so it cannot overflow). The clamp happens in place under no_grad, so the
    # gradient flows as if unclamped, as PyTorch's does.
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(
            "cosine_similarity: expected common dtype to be floating point, yet common dtype "
            f"is {common._short}"
        )
    shape = broadcast_shape(x1.shape, x2.shape, "cosine_similarity")
    a = (x1 if x1.dtype.is_floating_point else x1.to(common)).expand(shape)
    b = (x2 if x2.dtype.is_floating_point else x2.to(common)).expand(shape)
    n1 = aten.linalg_vector_norm.default(a, 2, [dim], True).clone()
    n2 = aten.linalg_vector_norm.default(b, 2, [dim], True).clone()
    with GradKeyGuard(False, 0):  # no_grad
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((a / n1) * (b / n2)).sum(dim)


@impl(aten.pairwise_distance.default, _CIA)
def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    last = max(x1.ndim, x2.ndim) - 1
    return aten.norm.ScalarOpt_dim(x1 - x2 + eps, p, [last], keepdim)  # type: ignore[no-any-return]


@impl(aten.bilinear.default, _CIA)
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    op = "bilinear"
    if input1.ndim != input2.ndim:
        raise RuntimeError(
            f"{op}(): input dimensions do not match: got {input1.ndim} and {input2.ndim}"
        )
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"{op}(): input batch dimensions do not match: got {input1.shape[i]} and "
                f"{input2.shape[i]}"
            )
    o, i1, i2 = weight.shape
    if input1.shape[-1] != i1:
        raise RuntimeError(
            f"{op}(): input1 size does not match weight size: got {input1.shape[-1]} but "
            f"expected {i1}"
        )
    if input2.shape[-1] != i2:
        raise RuntimeError(
            f"{op}(): input2 size does not match weight size: got {input2.shape[-1]} but "
            f"expected {i2}"
        )
    if bias is not None and bias.shape[0] != o:
        raise RuntimeError(
            f"{op}(): bias size does not match weight size: got {bias.shape[0]} but expected {o}"
        )
    a = input1.reshape(-1, i1)
    b = input2.reshape(-1, i2)
    # y[n, k] = sum_ij a[n, i] W[k, i, j] b[n, j]: one matmul through (I1, O * I2), then a
    # batched product with b
    t = a.matmul(weight.permute(1, 0, 2).reshape(i1, o * i2)).reshape(-1, o, i2)
    out = t.matmul(b.unsqueeze(-1)).squeeze(-1).reshape(*input1.shape[:-1], o)
    return out if bias is None else out + bias


# NOTE [pdist]
# ``pdist(x, p)`` is the p-norm distance of every pair of rows ``i < j``, in row-major pair
# order (the upper triangle of ``cdist(x, x)``). As in PyTorch, the composition checks its
# input and calls one kernel, ``_pdist_forward`` (CPU and Meta in the products family),
# whose derivative is ``_pdist_backward`` (PyTorch's formulas by ``p``: 0 at a zero
# distance, the whole gradient to every coordinate at the maximum for ``p = inf``); like
# PyTorch's, ``_pdist_backward`` itself is not differentiable.


def pdist_check(self: Tensor, p: float) -> None:
    if self.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.ndim}D")
    if not self.dtype.is_floating_point:
        raise RuntimeError(
            f"pdist only supports floating-point dtypes (got {self.dtype._short}; convert with "
            ".float())"
        )
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values (got p={p})")


@impl(aten.pdist.default, _CIA)
def pdist(self: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between each pair of rows (NOTE [pdist]).

    >>> ember.pdist(ember.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    pdist_check(self, p)
    return aten._pdist_forward.default(self.contiguous(), p)  # type: ignore[no-any-return]
