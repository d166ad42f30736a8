"""The sparse COO layout (``docs/sparse.md``): ``sparse.mm`` of a 1000x1000 matrix 1%
full (300x300 with ``--quick``) by a dense 1000x64 one (SciPy's CSR product in the NumPy
column: what ember's kernel calls), ``coalesce`` and ``to_dense`` of an uncoalesced tensor,
a sum of two sparse tensors, and one training step of an ``Embedding(sparse=True)``
(forward, backward giving a sparse gradient, ``SGD`` with momentum or ``SparseAdam``) of
10,000 rows of 64 looking up 512 ids, ember against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, Thunk

try:
    import torch
except ImportError:
    torch = None


def _coo(lib: Any, n: int, density: float, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    nnz = int(n * n * density)
    i = rng.integers(0, n, (2, nnz))
    v = rng.standard_normal(nnz).astype(np.float32)
    # check_invariants stated: PyTorch warns at each call when it is left implicit
    return lib.sparse_coo_tensor(lib.tensor(i), lib.tensor(v), (n, n), check_invariants=False)


def _mm(lib: Any, n: int, k: int) -> Thunk:
    a = _coo(lib, n, 0.01, 0).coalesce()
    b = lib.tensor(np.random.default_rng(1).standard_normal((n, k)).astype(np.float32))
    return lambda: lib.sparse.mm(a, b)


def _scipy_mm(n: int, k: int) -> Thunk:
    from scipy import sparse

    a = _coo(ember, n, 0.01, 0).coalesce()
    csr = sparse.csr_array((a._values().numpy(), tuple(a._indices().numpy())), shape=(n, n))
    b = np.random.default_rng(1).standard_normal((n, k)).astype(np.float32)
    return lambda: csr @ b


def _unary(lib: Any, n: int, what: str) -> Thunk:
    a = _coo(lib, n, 0.01, 0)
    if what == "add":
        a, b = a.coalesce(), _coo(lib, n, 0.01, 2).coalesce()
        return lambda: a + b
    return lambda: getattr(a, what)()


def _embedding_step(lib: Any, opt_name: str, rows: int, batch: int) -> Thunk:
    rng = np.random.default_rng(0)
    emb = lib.nn.Embedding(rows, 64, sparse=True)
    kwargs = {"lr": 0.1, "momentum": 0.9} if opt_name == "SGD" else {"lr": 1e-3}
    opt = getattr(lib.optim, opt_name)(emb.parameters(), **kwargs)
    idx = lib.tensor(rng.integers(0, rows, (batch,)))

    def step() -> None:
        opt.zero_grad()
        emb(idx).pow(2).sum().backward()
        opt.step()

    step()  # the optimizer's state exists before timing
    return step


def cases(quick: bool) -> list[Case]:
    n = 300 if quick else 1000
    rows = 1000 if quick else 10000
    t = torch is not None
    out = [
        Case(
            "sparse",
            f"sparse.mm {n}² @64",
            _mm(ember, n, 64),
            _scipy_mm(n, 64),
            _mm(torch, n, 64) if t else None,
            ("torch", 2.0),
        ),  # fmt: skip
    ]
    for what in ("coalesce", "to_dense", "add"):
        out.append(
            Case(
                "sparse",
                f"{what} {n}² 1%",
                _unary(ember, n, what),
                None,
                _unary(torch, n, what) if t else None,
                ("torch", 3.0),
            )  # fmt: skip
        )
    for opt_name in ("SGD", "SparseAdam"):
        out.append(
            Case(
                "sparse",
                f"emb+{opt_name} step",
                _embedding_step(ember, opt_name, rows, 512),
                None,
                _embedding_step(torch, opt_name, rows, 512) if t else None,
                ("torch", 3.0),
            )  # fmt: skip
        )
    return out
