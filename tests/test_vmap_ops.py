"""Every op in the registry with samples, under ``vmap``: mapped over each of its Tensor
arguments in turn, the result equals a loop of the op over the batch, values and dtypes
(PyTorch's ``test_vmap_exhaustive`` in test/functorch/test_vmap.py, in ember's op helper).

One sample per op (the first one), batch of 2: the sample's tensor and a copy with its
values permuted (so a valid index stays valid). An op that takes the slow fallback is
listed in ``FALLBACK`` (a data-dependent shape, or a rule still to come); a test fails
when the list is stale either way.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember
import ember.testing._internal.samples  # noqa: F401  (registers the samples)
from ember.func import vmap
from ember.testing._internal import opinfo
from ember.testing._internal.opinfo import clone_args, generate, samples_for

OPS = [
    op
    for op in opinfo.tested_overloads()
    if samples_for(op) is not None
    and not op._schema.is_out
    and "nondeterministic_seeded" not in op.tags
    and all(r.type.base == "Tensor" for r in op._schema.returns)
    and op._schema.returns
]

#: ops whose values are random or uninitialized: compared by shape and dtype only
#: (randomness under vmap is tested in test_vmap.py)
UNVALUED = {
    "aten.empty_like.default", "aten.rand_like.default", "aten.rand_like.generator",
    "aten.randn_like.default", "aten.randn_like.generator", "aten.randint_like.default",
    "aten.randint_like.low_dtype", "aten.randint_like.generator",
    "aten.randint_like.low_generator_dtype", "aten.new_empty.default",
}  # fmt: skip

#: ops that raise under vmap when mapped over some argument, as PyTorch's do, and why
RAISES = {
    "aten.set_.source_Tensor": "set_ swaps storage: the fallback refuses to (no rule)",
    "aten.set_.default": "set_ swaps storage: the fallback refuses to (no rule)",
    "aten.set_.source_Storage": "set_ swaps storage: the fallback refuses to (no rule)",
    "aten.set_.source_Storage_storage_offset": "set_ swaps storage: the fallback refuses to",
    "aten.set_.source_Tensor_storage_offset": "set_ swaps storage: the fallback refuses to",
    "aten.tensor_split.tensor_indices_or_sections": "reads its indices tensor's values",
    "aten.one_hot.default": "num_classes=-1 reads the tensor's maximum",
    "aten.ctc_loss.Tensor": "reads its length tensors' values",
    "aten.istft.default": "its overlap-add check reads the window envelope's values",
    "aten.batch_norm.default": "training writes unbatched running statistics (PyTorch's error)",
    "aten.native_batch_norm.default": "training writes unbatched running statistics",
    # ember's is native_batch_norm on copies of the statistics, which refuses them; PyTorch
    # has no rule either and answers with its slow loop
    "aten._native_batch_norm_legit_functional.default": "native_batch_norm's error (copies)",
}

#: ops that take the slow fallback (a loop, with PyTorch's warning) when mapped over some
#: argument: the ones whose result shape depends on the data (masked_select, nonzero, the
#: unique and histogram ops; PyTorch refuses them under vmap, ember's loop answers) and the
#: few whose rules are still to come (an op added to the catalogue without a rule takes it
#: too; the test checks values for every op, and that this list is not stale)
FALLBACK = {
    "aten._unique2.default",
    "aten.as_strided_scatter.default",  # addresses storage, as as_strided does
    "aten.histc.default",
    "aten._histogramdd_bin_edges.default",  # a list of tensors shaped by the bin counts
    "aten._histogramdd_from_bin_cts.default",
    "aten._histogramdd_from_bin_tensors.default",
    # one random sample per (batch, channel) plane: the loop keeps each example's samples
    "aten.fractional_max_pool2d.default",
    "aten.fractional_max_pool3d.default",
    # a rule for unbatched weights (and, for the backward, an unbatched W_hh); per-example
    # weights take the loop (_batched/sequences.py)
    "aten.mkldnn_rnn_layer.default",
    "aten.mkldnn_rnn_layer_backward.default",
    # PyTorch has no rule for these either: a loop per example
    "aten.histogram.bin_ct",
    "aten.histogram.bins_tensor",
    "aten.masked_select.default",
    "aten.nonzero.default",
    "aten.unique_consecutive.default",
}


def _first_sample(op: Any) -> opinfo.SampleInput | None:
    info = samples_for(op)
    assert info is not None
    floats = [d for d in info.dtypes if d is ember.float32] or list(info.dtypes)
    for d in floats:
        for s in generate(op, d):
            return s
    return None


def _positions(sample: opinfo.SampleInput) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for i, a in enumerate(sample.args):
        if isinstance(a, ember.Tensor):
            out.append(("arg", i))
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], ember.Tensor):
            out += [("arg", i, j) for j in range(min(len(a), 2))]  # an element of a list
    for k, v in sample.kwargs.items():
        if isinstance(v, ember.Tensor):
            out.append(("kw", k))
    return out


def _permuted(t: Any, seed: int) -> Any:
    arr = np.array(t.detach().numpy(), copy=True)
    flat = arr.reshape(-1)
    np.random.default_rng(seed).shuffle(flat)
    return ember.from_numpy(flat.reshape(arr.shape).copy())


def _with(sample: opinfo.SampleInput, where: tuple[Any, ...], value: Any) -> tuple[Any, Any]:
    args, kwargs = list(clone_args(sample.args)), dict(clone_args(sample.kwargs))
    if len(where) == 3:
        items = list(args[where[1]])
        items[where[2]] = value
        args[where[1]] = type(args[where[1]])(items)
    elif where[0] == "arg":
        args[where[1]] = value
    else:
        kwargs[where[1]] = value
    return args, kwargs


def _same(got: Any, want: Any, where: str, values: bool = True) -> None:
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), where
        for g, w in zip(got, want, strict=True):
            _same(g, w, where, values)
        return
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{where}: shape {got.shape} != {want.shape}"
    if not values:
        return
    g, w = got.detach().numpy(), want.detach().numpy()
    if g.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(g, w, err_msg=where)


def _stack(outs: list[Any]) -> Any:
    first = outs[0]
    if isinstance(first, (tuple, list)):
        return tuple(_stack([o[i] for o in outs]) for i in range(len(first)))
    return ember.stack([o.detach() for o in outs])


@pytest.mark.parametrize("op", OPS, ids=str)
def test_vmap_matches_a_loop(op: Any) -> None:
    sample = _first_sample(op)
    if sample is None:
        pytest.skip("no sample in any dtype")
    inplace = op._schema.is_mutable
    checked = 0
    fallback = False
    for where in _positions(sample):
        base = sample.args[where[1]] if where[0] == "arg" else sample.kwargs[where[1]]
        if len(where) == 3:
            base = base[where[2]]
        if inplace and where != ("arg", 0):
            continue  # writing batched values into an unbatched self raises (tested apart)
        variants = [base, _permuted(base, 1)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = _stack([op(*_with(sample, where, clone_args(v))[0],
                                  **_with(sample, where, v)[1]) for v in variants])  # fmt: skip
        except Exception:
            continue  # the permuted values are not valid for the op: nothing to compare
        batched = ember.stack([clone_args(v) for v in variants])

        def f(t: Any, where: tuple[Any, ...] = where) -> Any:
            args, kwargs = _with(sample, where, t)
            return op(*args, **kwargs)

        randomness = "different" if str(op) in UNVALUED else "error"
        if str(op) in RAISES:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got = vmap(f, randomness=randomness)(batched)
            except RuntimeError:
                checked += 1
                continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = vmap(f, randomness=randomness)(batched)
        fallback |= any("batching rule for " + op.name() in str(w.message) for w in caught)
        _same(got, want, f"{op} mapped over {where}", str(op) not in UNVALUED)
        checked += 1
    if checked and str(op) in FALLBACK:
        assert fallback, f"{op} has a batching rule now: take it out of FALLBACK"
    if checked and str(op) not in FALLBACK:
        assert not fallback, f"{op} takes the slow fallback: give it a rule (or list it)"
    if not checked:
        pytest.skip("no argument whose permuted values the op accepts")
