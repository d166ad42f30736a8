"""``histogram`` and ``pdist`` (issue 18): the function and method spellings, the named
result, out=, and what PyTorch does about gradients, beyond the op samples."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch


@requires_torch
def test_histogram_spellings_and_result_match_torch() -> None:
    data = [1.0, 2.0, 1.0, 4.0, 2.5, 0.3, 7.0]
    for mod in (ember, torch):
        x = mod.tensor(data)
        a = mod.histogram(x, 3, range=(0.0, 4.0), weight=x, density=True)
        b = x.histogram(mod.tensor([0.0, 1.0, 3.0, 4.0]))
        if mod is ember:
            e = (a, b)
        else:
            t = (a, b)
    for er, tr in zip(e, t, strict=True):
        assert type(er).__name__ == "histogram" and er._fields == ("hist", "bin_edges")
        np.testing.assert_allclose(er.hist.numpy(), tr.hist.numpy(), rtol=1e-6)
        np.testing.assert_allclose(er.bin_edges.numpy(), tr.bin_edges.numpy(), rtol=1e-6)


def test_histogram_out_and_backward_raises_as_torch() -> None:
    x = ember.tensor([0.5, 1.5, 1.5], requires_grad=True)
    hist, edges = ember.empty(0), ember.empty(0)
    r = ember.histogram(x.detach(), 2, out=(hist, edges))
    assert r.hist is hist and hist.tolist() == [1.0, 2.0] and edges.tolist() == [0.5, 1.0, 1.5]
    h = ember.histogram(x, 2)  # requires grad, as PyTorch's, and backward refuses
    assert h.hist.requires_grad
    with pytest.raises(NotImplementedError, match="histogram"):
        h.hist.sum().backward()


@requires_torch
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, float("inf")])
def test_pdist_gradient_at_equal_rows_matches_torch(p: float) -> None:
    rows = [[0.0, 0.0], [0.0, 0.0], [1.0, 2.0], [1.0, -1.0]]
    grads = []
    for mod in (ember, torch):
        x = mod.tensor(rows, dtype=mod.float64, requires_grad=True)
        (mod.pdist(x, p) * mod.arange(1.0, 7.0, dtype=mod.float64)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
