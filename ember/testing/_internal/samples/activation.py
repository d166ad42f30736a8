"""Sample inputs for the activation ops and their backward ops (see opinfo.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import ErrorInput, SampleInput, errors, samples

F32_64 = (dtypes.float32, dtypes.float64)
#: int64 samples check that ember refuses what PyTorch refuses (NotImplementedError)
FLOATS_AND_LONG = (*F32_64, dtypes.int64)


def _x(make: Any, shape: Any = (3, 4), noncontiguous: bool = False) -> Any:
    return make(shape, low=-4, high=4, noncontiguous=noncontiguous)


def _shapes(make: Any) -> Iterator[Any]:
    yield _x(make)
    yield _x(make, ())
    yield _x(make, (0,))
    yield _x(make, (3, 4), noncontiguous=True)


@samples("leaky_relu.default", dtypes=FLOATS_AND_LONG)
def leaky_relu_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _shapes(make):
        yield SampleInput(x)
    yield SampleInput(_x(make), 0.2)
    yield SampleInput(_x(make), negative_slope=-1.5)


@samples("elu.default", dtypes=FLOATS_AND_LONG)
def elu_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _shapes(make):
        yield SampleInput(x)
    yield SampleInput(_x(make), 0.5, 2.0, 1.5)
    yield SampleInput(_x(make), alpha=2, input_scale=0.5)


@samples("celu.default", dtypes=FLOATS_AND_LONG)
def celu_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _shapes(make):
        yield SampleInput(x)
    yield SampleInput(_x(make), 0.5)
    yield SampleInput(_x(make), alpha=2.5)


@samples("softplus.default", dtypes=FLOATS_AND_LONG)
def softplus_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _shapes(make):
        yield SampleInput(x)
    yield SampleInput(make((3, 4), low=-30, high=30), 2, 10)
    yield SampleInput(_x(make), beta=0.5, threshold=1)


@samples("hardtanh.default", dtypes=(*F32_64, dtypes.int64, dtypes.int32))
def hardtanh_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _shapes(make):
        yield SampleInput(x)
    yield SampleInput(_x(make), -2, 3)
    yield SampleInput(_x(make), min_val=0.5, max_val=2.5)


@samples("hardswish.default", "hardsigmoid.default", "mish.default", dtypes=FLOATS_AND_LONG)
def hard_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _shapes(make):
        yield SampleInput(x)
    yield SampleInput(make((4, 5), low=-30, high=30))


@samples("softshrink.default", "hardshrink.default", dtypes=FLOATS_AND_LONG)
def shrink_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _shapes(make):
        yield SampleInput(x)
    yield SampleInput(_x(make), 1.5)
    yield SampleInput(_x(make), lambd=0)


@samples("threshold.default", dtypes=(*F32_64, dtypes.int64, dtypes.uint8))
def threshold_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=0, high=8)
    yield SampleInput(x, 3, -7)
    yield SampleInput(x, 2.5, 1)
    yield SampleInput(make(()), 0, 0)
    yield SampleInput(make((3, 4), noncontiguous=True), 1, 20)


@samples("_prelu_kernel.default", dtypes=FLOATS_AND_LONG)
def prelu_kernel_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_x(make, (2, 3, 4)), make((1, 3, 1)))
    yield SampleInput(_x(make, (3, 4)), make(()))
    yield SampleInput(_x(make, (3, 4), noncontiguous=True), make((4,)))


@samples("prelu.default", dtypes=F32_64)
def prelu_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_x(make, (2, 3, 4)), make(3))
    yield SampleInput(_x(make, (2, 3, 4)), make(1))
    yield SampleInput(_x(make, (5,)), make(1))
    yield SampleInput(_x(make, (2, 3)), make(3))
    yield SampleInput(_x(make, ()), make(()))
    yield SampleInput(_x(make, (2, 3, 4)), make(4), name="wrong channels")
    yield SampleInput(_x(make, (2, 3, 4)), make((3, 1)), name="2-d weight")


@samples("log_sigmoid_forward.default", "log_sigmoid.default", dtypes=FLOATS_AND_LONG)
def log_sigmoid_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _shapes(make):
        yield SampleInput(x)
    yield SampleInput(make((4, 5), low=-80, high=80))


@samples("glu.default", dtypes=FLOATS_AND_LONG)
def glu_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_x(make, (3, 4)))
    yield SampleInput(_x(make, (4, 3)), 0)
    yield SampleInput(_x(make, (2, 6, 2), noncontiguous=True), dim=-2)
    yield SampleInput(_x(make, (2, 0)), 0)
    yield SampleInput(_x(make, (3, 3)), name="odd size")
    yield SampleInput(_x(make, ()), name="0-dim")


@samples("selu.default", "relu6.default", dtypes=FLOATS_AND_LONG)
def selu_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _shapes(make):
        yield SampleInput(x)
    yield SampleInput(make((3, 4), low=-10, high=10))


# --------------------------------------------------------------------------- backward ops


def _gx(make: Any, shape: Any = (3, 4)) -> tuple[Any, Any]:
    return make(shape), _x(make, shape)


@samples("leaky_relu_backward.default", dtypes=F32_64)
def leaky_relu_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(*_gx(make), 0.01, False)
    yield SampleInput(*_gx(make), 0.3, True)
    yield SampleInput(*_gx(make), -0.3, False)


@samples("elu_backward.default", dtypes=F32_64)
def elu_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    g, x = _gx(make)
    yield SampleInput(g, 1.0, 1.0, 1.0, False, x)
    yield SampleInput(g, 0.5, 2.0, 1.5, False, x)
    out = ember.ops.aten.elu(x, 0.5, 2.0, 1.5)
    yield SampleInput(g, 0.5, 2.0, 1.5, True, out)


@samples("softplus_backward.default", dtypes=F32_64)
def softplus_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(*_gx(make), 1, 20)
    yield SampleInput(*_gx(make), 2, 1.5)


@samples("hardtanh_backward.default", dtypes=F32_64)
def hardtanh_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(*_gx(make), -1, 1)
    yield SampleInput(*_gx(make), -2.5, 0.5)


@samples(
    "hardswish_backward.default",
    "hardsigmoid_backward.default",
    "mish_backward.default",
    dtypes=F32_64,
)
def hard_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(*_gx(make))
    yield SampleInput(make((2, 5)), make((2, 5), low=-30, high=30))


@samples("softshrink_backward.default", "hardshrink_backward.default", dtypes=F32_64)
def shrink_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(*_gx(make), 0.5)
    yield SampleInput(*_gx(make), 2.0)


# float32 only: the buffer is a function of self, and PyTorch's double backward (which ember
# follows) differentiates through both, so neither finite differences of the op alone
# (tests/test_gradcheck.py) nor PyTorch's refusal of the buffer's gradient apply; the double
# backward is checked through F.logsigmoid in tests/test_nn_activation_loss.py
@samples("log_sigmoid_backward.default", dtypes=(dtypes.float32,))
def log_sigmoid_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    g, x = _gx(make)
    yield SampleInput(g, x, ember.ops.aten.log_sigmoid_forward(x)[1])


@samples("_prelu_kernel_backward.default", dtypes=F32_64)
def prelu_kernel_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3, 4)), _x(make, (2, 3, 4)), make((1, 3, 1)))
    yield SampleInput(make((3, 4)), _x(make, (3, 4)), make(()))


@samples("glu_backward.default", dtypes=F32_64)
def glu_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 2)), _x(make, (3, 4)), -1)
    yield SampleInput(make((2, 3)), _x(make, (4, 3)), 0)


# --------------------------------------------------------------------------- errors


@errors("softshrink.default")
def softshrink_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.ones(3), -1.0), RuntimeError, "lambda")


@errors("celu.default")
def celu_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.ones(3), 0.0), RuntimeError, "alpha cannot be 0")


@errors("hardtanh.default")
def hardtanh_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.ones(3, dtype=ember.bool)), RuntimeError, "Bool")
    yield ErrorInput(SampleInput(ember.ones(3, dtype=ember.uint8)), RuntimeError, "unsigned")


@errors("threshold.default")
def threshold_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.ones(3), 0.5, 1e40), RuntimeError, "overflow")
    yield ErrorInput(SampleInput(ember.ones(3, dtype=ember.bool), 0, 1), NotImplementedError)


@errors("glu.default")
def glu_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.ones(3)), RuntimeError, "must be even")
    yield ErrorInput(SampleInput(ember.ones(())), RuntimeError, "0-dimensional")


@errors("prelu.default")
def prelu_errors() -> Iterator[ErrorInput]:
    x = ember.ones(2, 3)
    yield ErrorInput(SampleInput(x, ember.ones(4)), RuntimeError, "channel size")
    yield ErrorInput(SampleInput(x, ember.ones(3, dtype=ember.float64)), RuntimeError, "Type")


@errors("leaky_relu_backward.default")
def leaky_relu_backward_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.ones(3), ember.ones(3), -0.5, True), RuntimeError, "slope")


@samples("gelu_backward.default", dtypes=F32_64)
def gelu_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(*_gx(make))
    yield SampleInput(*_gx(make), approximate="tanh")
    # no broadcasting sample: PyTorch's CPU kernel (oneDNN) fails on one
    yield SampleInput(make((3, 4), noncontiguous=True), _x(make, (3, 4)), name="noncontiguous")
    yield SampleInput(make(()), _x(make, ()), approximate="none")


@errors("gelu_backward.default")
def gelu_backward_errors() -> Iterator[ErrorInput]:
    x = ember.ones(2)
    yield ErrorInput(SampleInput(x, x, approximate="bad"), RuntimeError, "approximate")


@samples("silu_backward.default", dtypes=(*F32_64, dtypes.complex64))
def silu_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(*_gx(make))
    yield SampleInput(make((2, 5)), make((2, 5), low=-30, high=30))
    yield SampleInput(make((3, 4), noncontiguous=True), _x(make, (4,)), name="broadcast")


@samples("tanh_backward.default", "sigmoid_backward.default",
         dtypes=(*F32_64, dtypes.complex64))  # fmt: skip
def tanh_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    g, x = _gx(make)
    yield SampleInput(g, x.tanh(), name="tanh's result")
    yield SampleInput(g, x.sigmoid(), name="sigmoid's result")
    yield SampleInput(make((3, 4), noncontiguous=True), make((4,)), name="broadcast")
    yield SampleInput(make(()), make(()), name="0-dim")
