"""Ops that backward formulas use to undo views (PyTorch's ``*_backward`` ops): a gradient
of the view's shape placed into zeros of the input's shape. Being ops, they dispatch, so
the lazy device and tracers see them, and they have derivatives of their own."""

from __future__ import annotations

from ember.ops.native._define import define

_FN = ("function",)
define(
    "select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
    variants=_FN,
)
define(
    "slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
    "SymInt step) -> Tensor",
    variants=_FN,
)
define(
    "diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) "
    "-> Tensor",
    variants=_FN,
)
