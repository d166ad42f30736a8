"""FakeTensorMode: every op sample gives, on fake tensors, the shape, dtype and device of the
real run, and a view's strides (the Meta rules are the only shape functions).

Strides of results that are not views are not compared: ember's CPU kernels leave some
layouts to NumPy (``x[:, idx]`` with an index in the middle), where the Meta rules follow
PyTorch's, so the two can differ while both hold the same values."""

from __future__ import annotations

from typing import Any

import pytest

import ember
import ember.testing._internal.samples  # noqa: F401  (registers the samples)
from ember._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensor,
    FakeTensorMode,
)
from ember.testing._internal.opinfo import clone_args, generate, samples_for, tested_overloads

#: ops whose output shape reads the input's values without the dynamic_output_shape tag
#: (one_hot without num_classes takes the largest index; ctc_loss.Tensor reads the lengths,
#: the packed recurrent ops the batch sizes: PyTorch's fake mode raises too)
VALUE_DEPENDENT = {
    "aten.one_hot.default",
    "aten.ctc_loss.Tensor",
    *(f"aten.{name}.data" for name in ("lstm", "gru", "rnn_tanh", "rnn_relu")),
}

WITH_SAMPLES = [op for op in tested_overloads() if samples_for(op) is not None]


def _compare(fake: Any, real: Any, where: str, view: bool) -> None:
    if isinstance(real, ember.Tensor):
        assert isinstance(fake, FakeTensor), f"{where}: got {type(fake).__name__}"
        assert tuple(fake.shape) == tuple(real.shape), f"{where}: shape {fake.shape}"
        assert fake.dtype is real.dtype, f"{where}: dtype {fake.dtype} != {real.dtype}"
        assert fake.device == real.device, f"{where}: device {fake.device}"
        if view and real._base is not None and real.numel() > 1:  # a view in fact (conj
            # of a complex tensor copies: NOTE [complex views])
            assert fake.stride() == real.stride(), (
                f"{where}: strides {fake.stride()} != real {real.stride()}"
            )
    elif isinstance(real, (list, tuple)):
        assert isinstance(fake, (list, tuple)) and len(fake) == len(real), where
        for i, (f, r) in enumerate(zip(fake, real, strict=True)):
            _compare(f, r, f"{where}[{i}]", view)


def _flat(x: Any) -> list[Any]:
    """The leaves of nested lists and tuples (a result holding a list of tensors)."""
    if isinstance(x, (list, tuple)):
        return [leaf for e in x for leaf in _flat(e)]
    return [x]


@pytest.mark.parametrize("op", WITH_SAMPLES, ids=str)
def test_fake_matches_real(op: Any) -> None:
    info = samples_for(op)
    assert info is not None
    if op._schema.is_out:
        pytest.skip("out= results are the out tensors: covered by the functional op")
    for dtype in info.dtypes:
        for sample in generate(op, dtype):
            real_args = clone_args(sample.args)
            try:
                real = op(*real_args, **clone_args(sample.kwargs))
            except Exception:  # noqa: BLE001 - the error cases are the op tests' business
                continue
            mode = FakeTensorMode()
            args, kwargs = clone_args(sample.args), clone_args(sample.kwargs)
            same = [i for i, a in enumerate(real_args) if a is real]
            within = [(i, j) for i, a in enumerate(real_args) if type(a) is list
                      for j, e in enumerate(a) if e is real]  # fmt: skip
            if within:  # an input of a tensor list returned itself (cartesian_prod of one)
                with mode:
                    fake = op(*args, **kwargs)
                if fake is not args[within[0][0]][within[0][1]]:
                    _compare(fake, real, f"{op} {dtype.name} {sample}", op.is_view)
                continue
            inputs = {id(a) for a in real_args}
            inputs |= {id(e) for a in real_args if type(a) is list for e in a}
            if isinstance(real, (list, tuple)) and any(id(r) in inputs for r in _flat(real)):
                # a list holding some inputs themselves (atleast_1d of tensors already 1-D,
                # as PyTorch's; histogramdd's given edges): the others are compared
                with mode:
                    fake = op(*args, **kwargs)
                assert len(_flat(fake)) == len(_flat(real))
                pairs = zip(_flat(fake), _flat(real), strict=True)
                for i, (f, r) in enumerate(pairs):
                    if id(r) not in inputs:
                        _compare(f, r, f"{op} {dtype.name} {sample}[{i}]", op.is_view)
                continue
            if same:
                # the op returned its input object: a composite that dispatches nothing
                # (x.contiguous() of a contiguous x) returns the real input itself, others
                # the fake tensor the input became
                with mode:
                    fake = op(*args, **kwargs)
                if fake is not args[same[0]]:
                    _compare(fake, real, f"{op} {dtype.name} {sample}", op.is_view)
                continue
            if "dynamic_output_shape" in op.tags:
                with pytest.raises(DynamicOutputShapeException), mode:
                    op(*args, **kwargs)
                continue
            if str(op) in VALUE_DEPENDENT or "data_dependent_output" in op.tags:
                try:
                    with mode:
                        fake = op(*args, **kwargs)
                except DataDependentOutputException:
                    continue
            else:
                with mode:
                    fake = op(*args, **kwargs)
            _compare(fake, real, f"{op} {dtype.name} {sample}", op.is_view)


def test_fake_tensors_hold_no_data() -> None:
    with FakeTensorMode():
        x = ember.ones(10**6, 10**6)
        y = (x @ x).sum(1)
        with pytest.raises(DynamicOutputShapeException):
            x.nonzero()
    assert type(y) is FakeTensor and tuple(y.shape) == (10**6,)
    with pytest.raises(DataDependentOutputException):
        y.item()


def test_real_tensors_are_converted_once() -> None:
    mode = FakeTensorMode()
    r = ember.ones(3)
    assert mode.from_tensor(r) is mode.from_real_tensor(r)
    with mode:
        out = r + 1
    assert type(out) is FakeTensor and tuple(out.shape) == (3,)
    refused = FakeTensorMode(allow_non_fake_inputs=False)
    with pytest.raises(RuntimeError, match="allow_non_fake_inputs"), refused:
        r + 1


def test_in_place_ops_views_and_autograd_on_fake_tensors() -> None:
    mode = FakeTensorMode()
    x = mode.from_tensor(ember.ones(2, 3, requires_grad=True))
    with mode:
        y = x * 2
        assert y.add_(1) is y and type(y) is FakeTensor
        v = y[0]
        assert v._base is y and tuple(v.shape) == (3,)
        y.sum().backward()
    assert type(x.grad) is FakeTensor and tuple(x.grad.shape) == (2, 3)
    outside = x.detach() * 3  # a fake tensor outside the block runs in its own mode
    assert type(outside) is FakeTensor


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 1, 0), (0, 2, 1)])
@pytest.mark.parametrize("step", [1, 2])
def test_pointwise_results_are_laid_out_as_pytorch_lays_them_out(perm, step) -> None:
    # TensorIterator's rule: the inputs' stride order (the first input decides), so a
    # traced graph sees the layout the kernels make (a write through a view of the result
    # depends on it: NOTE [functional tracing])
    torch = pytest.importorskip("torch")

    def results(lib: Any, mode: Any = None) -> list[tuple[int, ...]]:
        x = lib.arange(30.0).reshape(2, 3, 5).permute(*perm)[..., ::step]
        others = [x.abs(), x * 2, x + x, x * lib.ones(x.shape[-1]), lib.ones(x.shape[-1]) * x]
        if mode is not None:
            with mode:
                fx = mode.from_tensor(x)
                others = [fx.abs(), fx * 2, fx + fx, fx * lib.ones(x.shape[-1])]
                others.append(lib.ones(x.shape[-1]) * fx)
        return [tuple(o.stride()) for o in others]

    assert results(ember, FakeTensorMode()) == results(torch)
