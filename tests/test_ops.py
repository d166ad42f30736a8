"""Every registered op, through one helper: CPU vs PyTorch, Meta vs CPU, and coverage.

Samples live in ``ember/testing/_internal/samples/`` (one file per family).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import ember
import ember.testing._internal.samples  # noqa: F401  (registers the samples)
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import FUNCTIONAL_OF
from ember.testing._internal import opinfo
from ember.testing._internal.opinfo import (
    EXEMPT,
    assert_grads_match,
    assert_meta_matches,
    assert_same,
    clone_args,
    generate,
    grad_leaves,
    samples_for,
    to_meta,
    to_torch,
    torch_grad_leaves,
    torch_leaves,
    torch_op,
)

from .conftest import requires_torch, torch

OPS = opinfo.tested_overloads()
WITH_SAMPLES = [op for op in OPS if samples_for(op) is not None]


def _builtin_base(exc: type[BaseException]) -> type[BaseException]:
    for klass in exc.__mro__:
        if klass.__module__ == "builtins":
            return klass
    return Exception


def _out_tensors(op: Any, result: Any) -> dict[str, Any]:
    names = [a.name for a in op._schema.kwarg_only if a.is_write]
    results = result if isinstance(result, (list, tuple)) else (result,)
    return {n: opinfo.clone_args(r) for n, r in zip(names, results, strict=True)}


def _run_pair(
    op: Any, sample: opinfo.SampleInput, info: Any, written: list[Any] | None = None
) -> tuple[Any, Any, BaseException | None, BaseException | None]:
    """Run ``op`` on the sample in ember and in PyTorch: (results, exceptions). ``written``,
    if given, receives (ember, torch) pairs of the arguments the op writes (``Tensor(a!)``
    positional ones), after the call."""
    e_args, e_kwargs = clone_args(sample.args), clone_args(sample.kwargs)
    t_args, t_kwargs = to_torch(sample.args), to_torch(sample.kwargs)
    if op._schema.is_out:
        fop = FUNCTIONAL_OF[op]
        try:
            ref = fop(*clone_args(sample.args), **clone_args(sample.kwargs))
        except Exception as exc:  # noqa: BLE001 - the functional op's test checks this error
            return None, None, exc, exc
        outs = _out_tensors(op, ref)
        e_kwargs = {**e_kwargs, **outs}
        t_kwargs = {**t_kwargs, **to_torch(outs)}
    e_res = t_res = None
    e_exc = t_exc = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_res = torch_op(op, info)(*t_args, **t_kwargs)
    except Exception as exc:  # noqa: BLE001 - any error must be matched by ember
        t_exc = exc
    try:
        e_res = op(*e_args, **e_kwargs)
    except Exception as exc:  # noqa: BLE001
        e_exc = exc
    if written is not None:
        for i, a in enumerate(op._schema.positional):
            if a.is_write and i < len(e_args):
                written.append((e_args[i], t_args[i]))
    return e_res, t_res, e_exc, t_exc


def _compare_with_torch(op: Any, sample: opinfo.SampleInput, info: Any, where: str) -> bool:
    """Run one sample in ember and PyTorch and compare; False when both raised alike."""
    written: list[Any] = []
    e_res, t_res, e_exc, t_exc = _run_pair(op, sample, info, written)
    if t_exc is not None:
        assert e_exc is not None, f"{where}: torch raised {t_exc!r}, ember returned"
        assert isinstance(e_exc, _builtin_base(type(t_exc))), (
            f"{where}: ember raised {type(e_exc).__name__}({e_exc}), torch "
            f"{type(t_exc).__name__}({t_exc})"
        )
        return False
    if e_exc is not None:
        raise AssertionError(f"{where}: ember raised, torch did not") from e_exc
    assert_same(
        e_res, t_res, check_strides=info.check_strides and op.is_view, info=info, where=where
    )
    for e_arg, t_arg in written:  # what an in-place op wrote (foreach ops return ())
        assert_same(e_arg, t_arg, check_strides=False, info=info, where=f"{where} (self)")
    return True


@requires_torch
@pytest.mark.parametrize("op", WITH_SAMPLES, ids=str)
def test_cpu_matches_torch(op: Any) -> None:
    info = samples_for(op)
    assert info is not None
    if not info.compare_torch:
        pytest.skip(f"{op}: values are defined differently from PyTorch's (see its samples)")
    checked = 0
    for dtype in info.dtypes:
        for sample in generate(op, dtype):
            checked += _compare_with_torch(op, sample, info, f"{op} {dtype.name} {sample}")
    assert checked or op._schema.is_mutable, f"{op}: no sample ran without error"


@requires_torch
@pytest.mark.parametrize("op", WITH_SAMPLES, ids=str)
def test_edges_match_torch(op: Any) -> None:
    """0, -0, ±inf and NaN values, 0-dim and size-1 shapes, 1-D inputs with a dim
    (NOTE [edge samples]): the same values, or the same exception type, as PyTorch."""
    info = samples_for(op)
    assert info is not None
    if not info.compare_torch:
        pytest.skip(f"{op}: values are defined differently from PyTorch's (see its samples)")
    for dtype in info.dtypes:
        if dtype.name not in ("float32", "float64", "int64"):
            continue  # the edges are about values and shapes, not about each dtype
        for sample in opinfo.edge_samples(op, dtype):
            _compare_with_torch(op, sample, info, f"{op} {dtype.name} {sample}")


def _meta_kwargs(op: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Meta keyword arguments; a factory (no tensor argument) gets ``device='meta'``."""
    out = to_meta(kwargs)
    args = op._schema.arguments
    if any(a.name == "device" for a in args) and not any(a.type.base == "Tensor" for a in args):
        out["device"] = "meta"
    return out


@pytest.mark.parametrize("op", WITH_SAMPLES, ids=str)
def test_meta_matches_cpu(op: Any) -> None:
    info = samples_for(op)
    assert info is not None
    for dtype in info.dtypes:
        for sample in generate(op, dtype):
            args, kwargs = clone_args(sample.args), clone_args(sample.kwargs)
            if op._schema.is_out:
                continue  # out= results are the out tensors: covered by the functional op
            try:
                real = op(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001
                if not info.meta_errors:
                    continue  # the error depends on values, which Meta does not have
                with pytest.raises(type(exc)):
                    op(*to_meta(sample.args), **_meta_kwargs(op, sample.kwargs))
                continue
            if "dynamic_output_shape" in op.tags or "data_dependent_output" in op.tags:
                # NOTE [data-dependent shapes]: a result a meta tensor cannot give
                with pytest.raises(NotImplementedError):
                    op(*to_meta(sample.args), **_meta_kwargs(op, sample.kwargs))
                continue
            meta = op(*to_meta(sample.args), **_meta_kwargs(op, sample.kwargs))
            assert_meta_matches(meta, real, f"{op} {dtype.name} {sample}")


@pytest.mark.parametrize("op", sorted(opinfo.ERRORS), ids=str)
def test_error_inputs(op: str) -> None:
    packet, _, overload = op.partition(".")
    overload_obj = getattr(getattr(ember.ops.aten, packet), overload or "default")
    for case in opinfo.ERRORS[op]():
        with pytest.raises(case.error, match=case.match or None):
            overload_obj(*case.sample.args, **case.sample.kwargs)
        if torch is not None:
            t_op = torch_op(overload_obj, None)
            with pytest.raises(_builtin_base(case.error)):
                t_op(*to_torch(case.sample.args), **to_torch(case.sample.kwargs))


def _has_meta(op: Any) -> bool:
    ks = op._kernels
    return any(k in ks for k in (DispatchKey.Meta, DispatchKey.CompositeImplicitAutograd,
                                 DispatchKey.CompositeExplicitAutograd))  # fmt: skip


def test_coverage_every_op_has_samples_and_meta() -> None:
    missing_samples = [str(op) for op in OPS if samples_for(op) is None and str(op) not in EXEMPT]
    missing_meta = [str(op) for op in OPS if not _has_meta(op) and str(op) not in EXEMPT]
    assert not missing_samples, f"ops without samples: {missing_samples}"
    assert not missing_meta, f"ops without a Meta rule: {missing_meta}"


# --------------------------------------------------------------------------- gradients


def _differentiable_ops() -> list[Any]:
    from ember.autograd.function_table import DERIVATIVES

    # (in-place ops with entries of their own, normal_ and bernoulli_.float, would write into
    # the leaves the harness makes: their gradients are checked in tests/test_tensor_api.py)
    return [op for op in WITH_SAMPLES if op in DERIVATIVES and not op._schema.is_mutable]


def _float64_samples(op: Any) -> list[opinfo.SampleInput]:
    info = samples_for(op)
    assert info is not None
    if ember.float64 not in info.dtypes:
        return []
    return list(generate(op, ember.float64))


def _with_grad(x: Any) -> Any:
    if isinstance(x, ember.Tensor) and x.dtype.is_floating_point:
        return opinfo.clone_args(x).requires_grad_()
    if isinstance(x, list):
        return [_with_grad(e) for e in x]
    return x


#: samples where PyTorch's gradient is wrong (its own gradcheck fails), so it is no oracle;
#: tests/test_gradcheck.py checks ember's against finite differences instead
TORCH_GRADIENT_WRONG: dict[str, tuple[Callable[[opinfo.SampleInput], bool], str]] = {
    "aten.embedding_dense_backward.default": (
        lambda s: bool(s.args[4]),
        "PyTorch's double backward ignores scale_grad_by_freq",
    ),
    "aten.as_strided_scatter.default": (
        lambda s: True,
        "PyTorch's gradient for self zeroes the elements after the view instead of the "
        "view's own (its gradcheck fails; docs/fidelity.md)",
    ),
}


def _without_refused(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """``args`` with the tensors PyTorch refuses to differentiate (it raises "not
    differentiable with respect to argument ...") detached, so the rest can be compared."""
    names = [a.name for a in op._schema.arguments]
    for _ in args:  # at most one refusal per argument
        try:
            torch_op(op, samples_for(op))(*torch_leaves(list(args)), **to_torch(kwargs))
            return args
        except RuntimeError as e:
            found = re.search(r"with respect to argument '(\w+)'", str(e))
            if found is None or found[1] not in names[: len(args)]:
                return args
            i = names.index(found[1])
            args = (*args[:i], args[i].detach(), *args[i + 1 :])
        except Exception:  # noqa: BLE001 - error parity is test_cpu_matches_torch's job
            return args
    return args


def _gradients_agree(op: Any, samples: list[opinfo.SampleInput]) -> tuple[int, int]:
    """Backward through ``op`` on each sample equals PyTorch's, for a random cotangent:
    (samples compared, samples PyTorch refused to differentiate)."""
    import numpy as np

    ran = refused = 0
    wrong = TORCH_GRADIENT_WRONG.get(str(op))
    for sample in samples:
        if wrong is not None and wrong[0](sample):
            continue  # PyTorch's gradient is wrong here; tests/test_gradcheck.py checks ember's
        args = _without_refused(op, tuple(_with_grad(a) for a in sample.args), sample.kwargs)
        leaves = grad_leaves(args)
        if not leaves:
            continue
        try:
            out = op(*args, **sample.kwargs)
        except Exception:  # noqa: BLE001 - error parity is test_cpu_matches_torch's job
            continue
        outs = [o for o in (out if isinstance(out, (list, tuple)) else [out])
                if isinstance(o, ember.Tensor) and o.requires_grad]  # fmt: skip
        if not outs:
            continue
        rng = np.random.default_rng(1)
        cots = [rng.standard_normal(tuple(o.shape)).astype(o.dtype.np) for o in outs]
        try:
            e_grads = ember.autograd.grad(
                outs, leaves, [ember.from_numpy(c) for c in cots], allow_unused=True
            )
        except RuntimeError as e_exc:  # an op PyTorch does not differentiate either (unique):
            e_refused = e_exc  # its backward raises there too, which is checked below
        else:
            e_refused = None
        t_args = tuple(torch_leaves(a) for a in args)
        t_out = torch_op(op, samples_for(op))(*t_args, **to_torch(sample.kwargs))
        t_outs = [o for o in (t_out if isinstance(t_out, (list, tuple)) else [t_out])
                  if isinstance(o, torch.Tensor) and o.requires_grad]  # fmt: skip
        t_leaves = torch_grad_leaves(t_args)
        try:
            t_grads = torch.autograd.grad(
                t_outs, t_leaves, [torch.from_numpy(c) for c in cots], allow_unused=True
            )
        except RuntimeError as t_exc:
            if e_refused is not None:
                assert isinstance(e_refused, _builtin_base(type(t_exc))), (
                    f"{op} {sample}: ember's backward raised {e_refused!r}, PyTorch's {t_exc!r}"
                )
            refused += 1
            continue  # PyTorch cannot differentiate this sample (e.g. scatter with src > index)
        if e_refused is not None:
            raise AssertionError(
                f"{op} {sample}: ember's backward raised, PyTorch's did not"
            ) from e_refused
        assert_grads_match(e_grads, t_grads, f"{op} {sample}")
        ran += 1
    return ran, refused


@requires_torch
@pytest.mark.parametrize("op", _differentiable_ops(), ids=str)
def test_gradients_match_torch(op: Any) -> None:
    """Backward through each differentiable op equals PyTorch's, for a random cotangent."""
    ran, refused = _gradients_agree(op, _float64_samples(op))
    if not ran and refused:
        pytest.skip(f"{op}: PyTorch computes no gradient for any of its samples to compare with")
    if not ran:
        pytest.skip(f"{op}: no float64 sample with a differentiable input")


@requires_torch
@pytest.mark.parametrize("op", _differentiable_ops(), ids=str)
def test_edge_gradients_match_torch(op: Any) -> None:
    """Gradients at exact zeros (both signs), for 0-dim and size-1 shapes and 1-D inputs with
    a dim (NOTE [edge samples]; inf and NaN inputs are left to the value test)."""
    info = samples_for(op)
    assert info is not None
    if ember.float64 not in info.dtypes:
        pytest.skip(f"{op}: no float64 samples")
    edges = [s for s in opinfo.edge_samples(op, ember.float64) if s.name != "special"]
    ran, refused = _gradients_agree(op, edges)
    if not ran:
        pytest.skip(f"{op}: no edge sample PyTorch differentiates ({refused} refused)")
