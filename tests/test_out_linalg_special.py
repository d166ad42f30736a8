"""``out=`` on the linear algebra and ``special`` functions that take it in PyTorch (declared
with ``out=True`` on their schema, kernels derived by ``ember/backends/variants.py``): the
values written, the object returned, and PyTorch's dtype rule (the linear algebra ones
require the result's dtype exactly: ``define(..., exact_out_dtype=True)``), each against
PyTorch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch

A = [[4.0, 1.0], [1.0, 3.0]]
V = [1.0, 2.0, 3.0]

#: name -> (call with ``out``, how many out tensors); ``a`` 2x2 SPD, ``v`` a 3-vector
CASES: dict[str, tuple[Callable[..., Any], int]] = {
    "linalg.inv": (lambda L, a, v, out: L.linalg.inv(a, out=out), 1),
    "inverse": (lambda L, a, v, out: L.inverse(a, out=out), 1),
    "linalg.inv_ex": (lambda L, a, v, out: L.linalg.inv_ex(a, out=out), 2),
    "linalg.cholesky": (lambda L, a, v, out: L.linalg.cholesky(a, out=out), 1),
    "linalg.cholesky_ex": (lambda L, a, v, out: L.linalg.cholesky_ex(a, out=out), 2),
    "cholesky": (lambda L, a, v, out: L.cholesky(a, out=out), 1),
    "linalg.solve": (lambda L, a, v, out: L.linalg.solve(a, a[:, :1], out=out), 1),
    "linalg.solve_ex": (lambda L, a, v, out: L.linalg.solve_ex(a, a, out=out), 2),
    "linalg.svdvals": (lambda L, a, v, out: L.linalg.svdvals(a, out=out), 1),
    "linalg.eigvalsh": (lambda L, a, v, out: L.linalg.eigvalsh(a, out=out), 1),
    "linalg.qr R": (lambda L, a, v, out: L.linalg.qr(a, out=out)[1].abs(), 2),
    "qr R": (lambda L, a, v, out: L.qr(a, out=out)[1].abs(), 2),
    "linalg.svd S": (lambda L, a, v, out: L.linalg.svd(a, out=out)[1], 3),
    "svd S": (lambda L, a, v, out: L.svd(a, out=out)[1], 3),
    "linalg.eigh values": (lambda L, a, v, out: L.linalg.eigh(a, out=out)[0], 2),
    "linalg.matrix_power": (lambda L, a, v, out: L.linalg.matrix_power(a, 3, out=out), 1),
    "linalg.multi_dot": (lambda L, a, v, out: L.linalg.multi_dot([a, a, a], out=out), 1),
    "linalg.matmul": (lambda L, a, v, out: L.linalg.matmul(a, a, out=out), 1),
    "linalg.cross": (lambda L, a, v, out: L.linalg.cross(v, v.flip(0), out=out), 1),
    "cross": (lambda L, a, v, out: L.cross(v, v.flip(0), dim=0, out=out), 1),
    "linalg.vecdot": (lambda L, a, v, out: L.linalg.vecdot(v, v, out=out), 1),
    "dot": (lambda L, a, v, out: L.dot(v, v.flip(0), out=out), 1),
    "vdot": (lambda L, a, v, out: L.vdot(v, v.flip(0), out=out), 1),
    "matmul": (lambda L, a, v, out: L.matmul(a, a, out=out), 1),
    "mm": (lambda L, a, v, out: L.mm(a, a, out=out), 1),
    "bmm": (lambda L, a, v, out: L.bmm(a[None], a[None], out=out), 1),
    "mv": (lambda L, a, v, out: L.mv(a, v[:2], out=out), 1),
    "chain_matmul": (lambda L, a, v, out: L.chain_matmul(a, a, a, out=out), 1),
    "addmm": (lambda L, a, v, out: L.addmm(a, a, a, beta=2, out=out), 1),
    "baddbmm": (lambda L, a, v, out: L.baddbmm(a[None], a[None], a[None], out=out), 1),
    "addbmm": (lambda L, a, v, out: L.addbmm(a, a[None], a[None], alpha=3, out=out), 1),
    "addmv": (lambda L, a, v, out: L.addmv(v[:2], a, v[:2], out=out), 1),
    "inner": (lambda L, a, v, out: L.inner(a, a, out=out), 1),
    "tensordot": (lambda L, a, v, out: L.tensordot(a, a, dims=1, out=out), 1),
    # (these take any out dtype the result casts to, in PyTorch too)
    "outer": (lambda L, a, v, out: L.outer(v, v, out=out), 1),
    "ger": (lambda L, a, v, out: L.ger(v, v, out=out), 1),
    "addr": (lambda L, a, v, out: L.addr(a, v[:2], v[:2], out=out), 1),
    "kron": (lambda L, a, v, out: L.kron(a, a, out=out), 1),
    "linalg.norm": (lambda L, a, v, out: L.linalg.norm(v, out=out), 1),
    "linalg.norm ord str": (lambda L, a, v, out: L.linalg.norm(a, "fro", out=out), 1),
    "linalg.matrix_norm": (lambda L, a, v, out: L.linalg.matrix_norm(a, out=out), 1),
    "linalg.matrix_norm ord": (lambda L, a, v, out: L.linalg.matrix_norm(a, 1, out=out), 1),
    "nuclear_norm": (lambda L, a, v, out: L.nuclear_norm(a, out=out), 1),
    "nuclear_norm dim": (lambda L, a, v, out: L.nuclear_norm(a, (0, 1), out=out), 1),
    "frobenius_norm": (lambda L, a, v, out: L.frobenius_norm(a, (0, 1), out=out), 1),
    "linalg.ldl_factor": (lambda L, a, v, out: L.linalg.ldl_factor(a, out=out)[0], 2),
    "linalg.ldl_solve": (
        lambda L, a, v, out: L.linalg.ldl_solve(*L.linalg.ldl_factor(a), a[:, :1], out=out),
        1,
    ),
    "special.xlogy": (lambda L, a, v, out: L.special.xlogy(v, v, out=out), 1),
    "special.xlogy self scalar": (lambda L, a, v, out: L.special.xlogy(2.0, v, out=out), 1),
    "special.xlogy other scalar": (lambda L, a, v, out: L.special.xlogy(v, 2.0, out=out), 1),
    "special.polygamma": (lambda L, a, v, out: L.special.polygamma(1, v, out=out), 1),
    "special.logsumexp": (lambda L, a, v, out: L.special.logsumexp(v, 0, out=out), 1),
}


def _outs(L: Any, n: int, dtype: Any) -> Any:
    made = [L.empty(0, dtype=dtype) for _ in range(n)]
    return made[0] if n == 1 else tuple(made)


def _run(L: Any, case: str, dtype_name: str) -> Any:
    call, n = CASES[case]
    out = _outs(L, n, getattr(L, dtype_name))
    if n == 2 and case.endswith("_ex"):  # (the info output is int32)
        out = (out[0], L.empty(0, dtype=L.int32))
    if case == "linalg.ldl_factor":  # (the pivots are int32)
        out = (out[0], L.empty(0, dtype=L.int32))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (cholesky, qr, svd, nuclear_norm: deprecated)
            r = call(L, L.tensor(A), L.tensor(V), out)
    except RuntimeError as e:
        return "RuntimeError", "Expected out tensor" in str(e) or "expected out" in str(e)
    first = out if n == 1 else out[0]
    returned = r if not isinstance(r, tuple) else r[0]
    return np.round(np.asarray(returned.tolist(), dtype=float), 4).tolist(), str(first.dtype)[6:]


@requires_torch
@pytest.mark.parametrize("case", list(CASES))
def test_out_writes_and_returns_as_pytorch(case: str) -> None:
    assert _run(ember, case, "float32") == _run(torch, case, "float32")


@requires_torch
@pytest.mark.parametrize("case", list(CASES))
def test_out_dtype_rule_as_pytorch(case: str) -> None:
    # float64 outs for float32 inputs: linear algebra refuses them, special takes them
    assert _run(ember, case, "float64")[0:1] == _run(torch, case, "float64")[0:1]


def test_out_is_the_object_written() -> None:
    out = ember.empty(0)
    assert ember.linalg.inv(ember.tensor(A), out=out) is out
    assert np.allclose(out.tolist(), np.linalg.inv(A), atol=1e-6)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got"):
        ember.linalg.inv(ember.tensor(A), out=ember.empty(0, dtype=ember.float64))
