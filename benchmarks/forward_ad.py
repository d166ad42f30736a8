"""Forward-mode AD: ``ember.func.jacfwd`` of a 100 -> 100 function against reverse mode
(``ember.func.jacrev`` when present, else ``ember.autograd.functional.jacobian``) and against
PyTorch's ``torch.func.jacfwd``; one ``jvp`` against ``torch.func.jvp``.

    python benchmarks/run.py --filter forward_ad

The "dual:" rows time a whole ``with dual_level(): unpack_dual(op(make_dual(a, t)))`` on
4 floats, in both libraries: forward mode's fixed costs (a level, a dual, one op).
``jacfwd`` is ``vmap`` of ``jvp`` over the 100 basis tangents: one batched forward pass whose
tangent ops run on (100, 100) batched tensors. The function is
``f(x) = sin(W @ tanh(x)) * x + x.sum()`` in float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, torch


def _f(lib: Any, w: Any) -> Any:
    return lambda x: (w @ x.tanh()).sin() * x + x.sum()


def _reverse(f: Any) -> Any:
    jacrev = getattr(ember.func, "jacrev", None)
    if jacrev is not None:
        return jacrev(f)
    return lambda x: ember.autograd.functional.jacobian(f, x)


def _dual_op(lib: Any, op: Any) -> Any:
    """A thunk for ``lib``: a dual level, a dual of 4 floats and ``op`` on it, returning the
    tangent (forward mode's fixed costs)."""
    fw = lib.autograd.forward_ad
    a4, one4 = lib.tensor([1.0, 2.0, 3.0, 4.0]), lib.ones(4)

    def run() -> Any:
        with fw.dual_level():
            return fw.unpack_dual(op(fw.make_dual(a4, one4))).tangent

    return run


def cases(quick: bool) -> list[Case]:
    n = 100
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    v = rng.standard_normal(n).astype(np.float32)
    ew, ex, ev = ember.from_numpy(w), ember.from_numpy(x), ember.from_numpy(v)
    ef = _f(ember, ew)
    jacfwd, jacrev = ember.func.jacfwd(ef), _reverse(ef)
    tt: dict[str, Any] = {}
    if torch is not None:
        tw, tx, tv = torch.from_numpy(w), torch.from_numpy(x), torch.from_numpy(v)
        tf = _f(torch, tw)
        tjf, tjr = torch.func.jacfwd(tf), torch.func.jacrev(tf)
        tt = {
            "jacfwd": lambda: tjf(tx),
            "jacrev": lambda: tjr(tx),
            "jvp": lambda: torch.func.jvp(tf, (tx,), (tv,)),
        }
    if torch is not None:
        tt["dual mul"] = _dual_op(torch, lambda d: d * d)
        tt["dual sin"] = _dual_op(torch, lambda d: d.sin())
    return [
        Case("forward_ad", "dual: a * a", _dual_op(ember, lambda d: d * d), None,
             tt.get("dual mul"), ("torch", 3.0)),
        Case("forward_ad", "dual: a.sin()", _dual_op(ember, lambda d: d.sin()), None,
             tt.get("dual sin"), ("torch", 3.0)),
        Case("forward_ad", "jacfwd 100->100", lambda: jacfwd(ex), None, tt.get("jacfwd"),
             ("torch", 2.0)),
        # the torch column here is torch.func.jacrev; the goal is against ember's reverse mode
        Case("forward_ad", "jacfwd vs jacrev", lambda: jacfwd(ex), None, tt.get("jacrev"),
             ("jacrev", 1.0), lambda: jacrev(ex)),
        Case("forward_ad", "jvp 100->100", lambda: ember.func.jvp(ef, (ex,), (ev,)), None,
             tt.get("jvp"), ("torch", 2.0)),
    ]  # fmt: skip
