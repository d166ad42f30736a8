"""Forward-mode gradients of every differentiable op equal its backward-mode Jacobian.

In the style of PyTorch's ``test/test_ops_fwd_gradients.py``: for each op of the registry
with float64 samples and a derivative formula, one small sample is checked: the Jacobian
forward-mode AD computes (one ``jvp`` per input element, ``forward_jacobian``) equals the
one backward mode computes (one ``vjp`` per output element). Backward mode is itself
checked against finite differences by ``tests/test_gradcheck.py``, so this needs no second
set of differences. The samples and their float64 leaves are ``test_gradcheck``'s.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd.forward_ad import rule_name
from ember.autograd.gradcheck import _analytical, forward_jacobian
from ember.ops.registry import OpOverload
from ember.testing._internal.opinfo import generate
from tests.test_gradcheck import (
    MAX_ELEMENTS,
    NOT_THE_DERIVATIVE,
    _count,
    _differentiable,
    _Leaves,
    _ops,
)


def _first_checkable(op: OpOverload) -> _Leaves | None:
    """The op's smallest float64 sample with a differentiable input and output."""
    samples = [s for s in generate(op, ember.float64) if 0 < _count((s.args, s.kwargs))]
    samples.sort(key=lambda s: _count((s.args, s.kwargs)))
    for sample in samples:
        if _count((sample.args, sample.kwargs)) > MAX_ELEMENTS:
            break
        checkable = _differentiable(op, sample)
        if checkable is not None:
            return checkable[0]
    return None


@pytest.mark.parametrize("op", _ops(), ids=str)
def test_forward_equals_backward(op: OpOverload) -> None:
    """Forward-mode AD's Jacobian of each op equals backward mode's, at one sample."""
    if str(op) in NOT_THE_DERIVATIVE:
        pytest.skip(NOT_THE_DERIVATIVE[str(op)])
    assert rule_name(op) is not None, f"{op} has a backward formula but no forward rule"
    leaves = _first_checkable(op)
    if leaves is None:
        pytest.skip(f"{op}: no float64 sample of at most {MAX_ELEMENTS} elements to check")
    fn = leaves.function(op)
    inputs = tuple(leaves.leaves)
    diff = list(range(len(inputs)))
    backward = _analytical(fn, inputs, diff)
    forward = forward_jacobian(fn, inputs, diff)
    assert len(forward) == len(backward)
    for k, (fw_row, bw_row) in enumerate(zip(forward, backward, strict=True)):
        for c, (fw, bw) in enumerate(zip(fw_row, bw_row, strict=True)):
            np.testing.assert_allclose(
                fw, bw, rtol=1e-7, atol=1e-9,
                err_msg=f"{op} ({rule_name(op)} rule): output {k}, input {c}",
            )  # fmt: skip
