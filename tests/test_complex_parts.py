"""``complex``, ``polar`` and ``view_as_complex`` (issue 18): what the op samples cannot show
(views sharing memory with ``view_as_real``, gradients through complex results), against
PyTorch."""

from __future__ import annotations

import numpy as np

import ember

from .conftest import requires_torch, torch


def test_view_as_complex_shares_memory_both_ways() -> None:
    r = ember.arange(12.0).view(3, 2, 2)[:, 1]
    z = ember.view_as_complex(r)
    assert z._base is not None and z.dtype is ember.complex64
    z.mul_(2)  # a write through the complex view reaches the real tensor
    assert r.tolist() == [[4.0, 6.0], [12.0, 14.0], [20.0, 22.0]]
    back = ember.view_as_real(z)
    back[0, 0] = -1.0
    assert z[0].item() == complex(-1, 6)
    assert back.data_ptr() == r.data_ptr()


@requires_torch
def test_gradients_through_complex_results_match_torch() -> None:
    a = np.array([0.5, 0.0, 2.0])
    b = np.array([1.0, -0.3, 0.2])
    w = np.array([1 + 2j, -0.5 + 1j, 3 - 1j])

    def run(t):  # a real loss of complex intermediates
        x = t.tensor(a, requires_grad=True)
        y = t.tensor(b, requires_grad=True)
        pair = t.stack([x, y], -1)
        c = t.complex(x, y) * t.tensor(w) + t.polar(x, y) * 2 - t.view_as_complex(pair)
        loss = (c * c.conj()).real.sum() + t.view_as_complex(pair * 3).abs().sum()
        loss.backward()
        return x.grad.numpy(), y.grad.numpy()

    for e, t in zip(run(ember), run(torch), strict=True):
        np.testing.assert_allclose(e, t, rtol=1e-10)
