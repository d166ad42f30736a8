"""The neural-network ops: schemas (catalogue), the shape rules their CPU kernels and Meta rules
share, and the ops PyTorch defines as compositions of others (``conv2d``, ``linear``,
``cross_entropy_loss``, ``scaled_dot_product_attention``...).

# NOTE [nn backward ops]
Layers with a cheaper fused gradient (convolution, pooling, normalization, embedding,
nll_loss, dropout) differentiate through PyTorch's own backward ops
(``convolution_backward``...), declared here as ops with CPU and Meta kernels, so tracers and
``__torch_dispatch__`` code see the same ops as on PyTorch. Their derivative lines live in
``ember/autograd/derivatives_nn.py``. ``reduction`` is PyTorch's enum: 0 none, 1 mean, 2 sum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember._global_settings import SDP_ENABLED
from ember._layout import strided
from ember.dispatch.keys import DispatchKey
from ember.dispatch.state import python_key_sees
from ember.dtypes import bool_, dtype, int32, int64, promote_types, uint8
from ember.ops.native._define import VARIANTS_OF, define
from ember.ops.native.attention import flash_applies
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_FN = ("function",)

# Every nn op is a function only (``torch.nn.functional`` holds the public fronts).
_SCHEMAS = (
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, "
    "SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
    "bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> "
    "(Tensor, Tensor, Tensor)",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], "
    "SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor",
    "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
    "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
    "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
    "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
    "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor, Tensor, Tensor)",
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
    "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> "
    "(Tensor, Tensor, Tensor)",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
    "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps) -> "
    "(Tensor, Tensor, Tensor)",
    "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
    "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
    "bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps, "
    "bool cudnn_enabled) -> Tensor",
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
    "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
    "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor",
    "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
    "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
    "int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor",
    "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "SymInt ignore_index=-100) -> Tensor",
    "nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "SymInt ignore_index=-100) -> Tensor",
    "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor",
    "mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, int reduction=1) -> Tensor",
    "one_hot(Tensor self, int num_classes=-1) -> Tensor",
    "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
    'pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor',
    "native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
    "native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor",
    "dropout(Tensor input, float p, bool train) -> Tensor",
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
    "Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, "
    "bool enable_gqa=False) -> Tensor",
)
for _schema in _SCHEMAS:
    define(_schema, variants=_FN)
# PyTorch declares only the in-place op (``torch.embedding_renorm_``, a function, no method);
# its functionalization makes ``embedding_renorm`` and ``embedding_renorm.out``, as here.
_renorm = define(
    "embedding_renorm(Tensor self, Tensor indices, float max_norm, float norm_type) -> Tensor",
    variants=(),
    inplace=True,
    out=True,
)
_renorm_packet = VARIANTS_OF[_renorm][0].overloadpacket  # type: ignore[union-attr]
_renorm_packet._variants.discard("method")
_renorm_packet._variants.add("function")

NONE, MEAN, SUM = 0, 1, 2


def check_reduction(reduction: int, op: str) -> None:
    """``reduction`` is 0, 1 or 2."""
    if reduction not in (NONE, MEAN, SUM):
        raise RuntimeError(f"{op}: {reduction} is not a valid value for reduction (0, 1 or 2)")


# --------------------------------------------------------------------------- shared shape rules


def expand_param(value: Sequence[int] | int, n: int, name: str, op: str) -> tuple[int, ...]:
    """``stride=2`` or ``[2]`` → ``(2, 2)`` for ``n`` spatial dims; other lengths raise."""
    v = (value,) if isinstance(value, int) else tuple(value)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise RuntimeError(
            f"{op}: expected {name} to be a single integer or {n} integers, got {list(v)}"
        )
    return v


def check_float_pair(a: Tensor, b: Tensor, op: str) -> None:
    """Input and weight must share a dtype (PyTorch casts nothing)."""
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"{op}: expected scalar type {a.dtype} for the weight but found {b.dtype}; cast the "
            "weight or input with .to()"
        )


def conv_output_shape(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    groups: int,
    output_padding: Sequence[int] = (),
) -> tuple[int, ...]:
    """The output shape of ``convolution`` (plain or transposed, any number of spatial dims);
    raises PyTorch's errors for bad arguments (NOTE [transposed convolution] in
    ``ember/backends/cpu/nn.py``)."""
    op = "convolution"
    k = weight.ndim
    if input.ndim != k:
        raise RuntimeError(
            f"{op}: Expected {k}-dimensional input for {k}-dimensional weight "
            f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
            f"{list(input.shape)} instead"
        )
    check_float_pair(input, weight, op)
    n = k - 2
    if n < 1:
        raise RuntimeError(f"{op}: weight should have at least three dimensions, got {k}")
    s, p, d = (
        expand_param(v, n, nm, op)
        for v, nm in ((stride, "stride"), (padding, "padding"), (dilation, "dilation"))
    )
    op_ = expand_param(output_padding, n, "output_padding", op) if transposed else (0,) * n
    if any(x < 0 for x in p) or any(x < 0 for x in op_):
        raise RuntimeError(f"{op}: negative padding is not supported; pass padding >= 0")
    if any(x <= 0 for x in s) or any(x <= 0 for x in d) or groups <= 0:
        raise RuntimeError(f"{op}: stride, dilation and groups must be positive")
    c_in = input.shape[1]
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"{op}: Given groups={groups}, expected weight to be divisible by {groups} at "
            f"dimension 0, but got weight of size {list(weight.shape)} instead"
        )
    if transposed:
        c_out = weight.shape[1] * groups
        if c_in != weight.shape[0]:
            raise RuntimeError(
                f"{op}: Given transposed=1, weight of size {list(weight.shape)}, expected input"
                f"{list(input.shape)} to have {weight.shape[0]} channels, but got {c_in} "
                "channels instead"
            )
        if any(op_[i] >= s[i] and op_[i] >= d[i] for i in range(n)):
            raise RuntimeError(
                f"{op}: output padding must be smaller than either stride or dilation, but got "
                f"output_padding={list(op_)}, stride={list(s)} and dilation={list(d)}"
            )
    else:
        c_out = weight.shape[0]
        if c_in != weight.shape[1] * groups:
            raise RuntimeError(
                f"{op}: Given groups={groups}, weight of size {list(weight.shape)}, expected "
                f"input{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                f"{c_in} channels instead"
            )
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise RuntimeError(
            f"{op}: Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
            f"with {c_out} elements, but got bias of size {list(bias.shape)} instead"
        )
    out = []
    for i in range(n):
        span = d[i] * (weight.shape[2 + i] - 1) + 1
        if transposed:
            size = (input.shape[2 + i] - 1) * s[i] - 2 * p[i] + span + op_[i]
        else:
            size = (input.shape[2 + i] + 2 * p[i] - span) // s[i] + 1
        if size <= 0:
            raise RuntimeError(
                f"{op}: Calculated output size is too small for input {list(input.shape)} and "
                f"kernel {list(weight.shape[2:])}; pad the input or use a smaller kernel"
            )
        out.append(size)
    return (input.shape[0], c_out, *out)


def pool_geometry(
    shape: Sequence[int],
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    op: str,
    n: int = 2,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``(kernel, stride, padding, dilation, output sizes)`` of an ``n``-d pooling op, checked."""
    if len(shape) not in (n + 1, n + 2) or any(s == 0 for s in shape[-n - 1 :]):
        raise RuntimeError(
            f"{op}: Expected non-empty {n + 1}D or {n + 2}D (batch mode) tensor with optional 0 "
            f"dim batch size for input, but got: {list(shape)}"
        )
    k = expand_param(kernel_size, n, "kernel_size", op)
    empty = not isinstance(stride, int) and len(stride) == 0
    s = k if empty else expand_param(stride, n, "stride", op)
    p = expand_param(padding, n, "padding", op)
    d = expand_param(dilation, n, "dilation", op)
    if any(x <= 0 for x in (*k, *s, *d)) or any(x < 0 for x in p):
        raise RuntimeError(
            f"{op}: kernel_size, stride and dilation must be greater than zero and padding "
            f"non-negative, got {list(k)}, {list(s)}, {list(d)} and {list(p)}"
        )
    if any(p[i] > (d[i] * (k[i] - 1) + 1) // 2 for i in range(n)):
        raise RuntimeError(
            f"{op}: pad should be at most half of effective kernel size, but got "
            f"pad={list(p)}, kernel_size={list(k)} and dilation={list(d)}"
        )
    out = []
    for i in range(n):
        size = shape[-n + i]
        num = size + 2 * p[i] - d[i] * (k[i] - 1) - 1 + ((s[i] - 1) if ceil_mode else 0)
        o = num // s[i] + 1
        if ceil_mode and (o - 1) * s[i] >= size + p[i]:
            o -= 1
        if o < 1:
            raise RuntimeError(
                f"{op}: Given input size {list(shape)}, the calculated output size "
                f"is too small; use a smaller kernel or more padding"
            )
        out.append(o)
    return k, s, p, d, tuple(out)


def avg_pool_geometry(
    shape: Sequence[int],
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    divisor_override: int | None,
    op: str,
    n: int = 2,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``pool_geometry`` of average pooling (dilation 1), also rejecting ``divisor_override=0``."""
    geometry = pool_geometry(shape, kernel_size, stride, padding, (1,) * n, ceil_mode, op, n)
    if divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    return geometry


def layer_norm_axes(input: Tensor, normalized_shape: Sequence[int], weight: Any, bias: Any) -> int:
    """The first normalized axis of ``native_layer_norm``; raises PyTorch's shape errors."""
    ns = tuple(normalized_shape)
    n = len(ns)
    if n == 0:
        raise RuntimeError(
            "native_layer_norm: Expected normalized_shape to be at least 1-dimensional"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(
                f"native_layer_norm: Expected {name} to be of same shape as "
                f"normalized_shape, but got {name} of shape {list(t.shape)} and "
                f"normalized_shape = {list(ns)}"
            )
    if input.ndim < n or tuple(input.shape[input.ndim - n :]) != ns:
        raise RuntimeError(
            f"native_layer_norm: Given normalized_shape={list(ns)}, expected input "
            f"with shape [*, {', '.join(map(str, ns))}], but got input of size "
            f"{list(input.shape)}"
        )
    return input.ndim - n


def check_batch_norm(input: Tensor, tensors: Sequence[Any], training: bool) -> int:
    """The channel count of ``native_batch_norm``; raises for mismatched parameter sizes."""
    if input.ndim < 2:
        raise RuntimeError(
            f"native_batch_norm: expected 2D or more input (N, C, ...), got "
            f"{input.ndim}D input of size {list(input.shape)}"
        )
    c = input.shape[1]
    for t in tensors:
        if t is not None and t.numel() != c:
            raise RuntimeError(
                f"native_batch_norm: running_mean, running_var, weight and bias "
                f"should have {c} elements (the channel count of input "
                f"{list(input.shape)}), got {list(t.shape)}"
            )
    return c


def check_native_batch_norm(
    input: Tensor,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
) -> int:
    """``check_batch_norm`` of the forward op; evaluation mode also needs the running stats."""
    c = check_batch_norm(input, (weight, bias, running_mean, running_var), training)
    if input.numel() == 0:  # batch_norm handles an empty input without this op
        raise RuntimeError(
            "native_batch_norm: input tensor must have at least one element, but got "
            f"input_sizes = {list(input.shape)}"
        )
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(
            "native_batch_norm: running_mean and running_var must be defined "
            "in evaluation mode; pass them or use training=True"
        )
    return c


def check_indices(indices: Tensor, op: str) -> None:
    """Embedding indices must be int64 or int32."""
    if indices.dtype not in (int64, int32):
        raise RuntimeError(
            f"{op}: Expected tensor for argument #1 'indices' to have one of the "
            f"following scalar types: Long, Int; but got {indices.dtype} instead"
        )


def check_embedding(weight: Tensor, indices: Tensor) -> None:
    """Dtype and shape checks of ``embedding`` (index bounds are checked by the kernel)."""
    check_indices(indices, "embedding")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: 'weight' must be 2-D, got shape {list(weight.shape)}")


def check_embedding_renorm(self: Tensor, indices: Tensor) -> None:
    """Dtype and shape checks of ``embedding_renorm_`` (index bounds are checked by the kernel)."""
    op = "embedding_renorm_"
    if self.ndim != 2:
        raise RuntimeError(
            f"{op}: expected a 2-D weight (num_embeddings, embedding_dim), got shape "
            f"{list(self.shape)}"
        )
    check_indices(indices, op)
    if not self.dtype.is_floating_point:
        raise RuntimeError(
            f"{op}: the weight must be floating point to take its norm, got {self.dtype}; "
            "cast it with .float()"
        )


def check_nll(self: Tensor, target: Tensor, weight: Any, reduction: int) -> None:
    """Shape and dtype checks of ``nll_loss_forward`` (values are checked by the kernel)."""
    op = "nll_loss_forward"
    if self.ndim not in (1, 2):
        raise RuntimeError(f"{op}: input tensor should be 1D or 2D, got {list(self.shape)}")
    if target.ndim > 1:
        raise RuntimeError(
            f"{op}: 0D or 1D target tensor expected, multi-target not supported "
            f"(got target of shape {list(target.shape)})"
        )
    if target.dtype is not int64:
        raise RuntimeError(
            f"{op}: expected scalar type Long but found {target.dtype}; pass class "
            "indices as int64 (target.long())"
        )
    if self.ndim == 1:
        if target.ndim == 1 and target.shape[0] != 1:  # one sample: target () or (1,)
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}"
            )
    elif target.ndim != 1 or target.shape[0] != self.shape[0]:
        raise RuntimeError(
            f"{op}: Expected input batch_size ({self.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 'a 0-dim target'})"
        )
    c = self.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise RuntimeError(
            f"{op}: weight tensor should be defined either for all {c} classes or "
            f"no classes but got weight tensor of shape: {list(weight.shape)}"
        )
    check_reduction(reduction, op)


def check_nll_batch(self: Tensor, target: Tensor) -> None:
    """``nll_loss_nd``'s first check (a ValueError in PyTorch): one target per sample."""
    if self.ndim > 1 and target.ndim >= 1 and self.shape[0] != target.shape[0]:
        raise ValueError(
            f"nll_loss: Expected input batch_size ({self.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )


def loss_dtype(self: Tensor, target: Tensor, op: str) -> dtype:
    """The promoted dtype of a pointwise loss; integral and complex dtypes raise PyTorch's
    NotImplementedError."""
    d = promote_types(self.dtype, target.dtype)
    if not d.is_floating_point:
        raise NotImplementedError(
            f"{op}_loss: \"{op}_cpu\" not implemented for '{d._short}'; pass floating tensors"
        )
    return d


def check_same_size(self: Tensor, target: Tensor, op: str) -> None:
    """``target`` must have the shape of ``self`` (no broadcasting)."""
    if tuple(self.shape) != tuple(target.shape):
        raise RuntimeError(
            f"{op}: Target size ({list(target.shape)}) "
            f"must be the same as input size ({list(self.shape)})"
        )


def check_dropout(p: float, train: bool | None) -> None:
    """``native_dropout`` takes a probability in [0, 1] (unchecked when ``train`` is False)."""
    if train is not False and not 0.0 <= p <= 1.0:
        raise RuntimeError(
            f"native_dropout: dropout probability has to be between 0 and 1, but got {p}"
        )


def pad_shape(shape: Sequence[int], pad: Sequence[int]) -> tuple[int, ...]:
    """The result shape of ``constant_pad_nd``: ``pad`` pairs start at the last dim."""
    op = "constant_pad_nd"
    if len(pad) % 2:
        raise RuntimeError(f"{op}: Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > len(shape):
        raise RuntimeError(
            f"{op}: Length of pad should be no more than twice the number of "
            f"dimensions of the input. Pad length is {len(pad)} while the input "
            f"has {len(shape)} dimensions."
        )
    out = list(shape)
    for i in range(len(pad) // 2):
        d = len(shape) - 1 - i
        out[d] = shape[d] + pad[2 * i] + pad[2 * i + 1]
        if out[d] < 0:
            raise RuntimeError(
                f"{op}: The input size {shape[d]}, plus negative padding "
                f"{pad[2 * i]} and {pad[2 * i + 1]} resulted in a negative output "
                f"size, which is invalid. Check dimension {d} of your input."
            )
    return tuple(out)


def reduce_loss(loss: Tensor, reduction: int) -> Tensor:
    """Apply a loss's ``reduction`` (0 none, 1 mean, 2 sum) with ember ops."""
    if reduction == MEAN:
        return loss.mean()
    if reduction == SUM:
        return loss.sum()
    return loss


# --------------------------------------------------------------------------- decompositions

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


@impl(aten.conv2d.default, _CIA)
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0),
    dilation: Sequence[int] = (1, 1),
    groups: int = 1,
) -> Tensor:
    s, p, d = (
        expand_param(v, 2, n, "conv2d")
        for v, n in ((stride, "stride"), (padding, "padding"), (dilation, "dilation"))
    )
    if input.ndim == 3 and weight.ndim == 4:
        return aten.convolution.default(
            input.unsqueeze(0), weight, bias, s, p, d, False, [0, 0], groups
        ).squeeze(0)
    return aten.convolution.default(input, weight, bias, s, p, d, False, [0, 0], groups)


@impl(aten.layer_norm.default, _CIA)
def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
    cudnn_enable: bool = True,
) -> Tensor:
    return aten.native_layer_norm.default(input, normalized_shape, weight, bias, eps)[0]


@impl(aten.batch_norm.default, _CIA)
def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    if input.numel() == 0:
        # an empty batch (or no channels): the input's copy, scaled and shifted per channel,
        # the running statistics untouched, as PyTorch's batch_norm (native_batch_norm
        # refuses it; its statistics would be NaN)
        check_batch_norm(input, (weight, bias, running_mean, running_var), training)
        out = aten.clone.default(input)
        per_channel = [input.shape[1], *[1] * (input.ndim - 2)]
        if weight is not None:
            out = aten.mul.Tensor(out, aten.view.default(weight, per_channel))
        if bias is not None:
            out = aten.add.Tensor(out, aten.view.default(bias, per_channel))
        return out
    # PyTorch's batch_norm (through _batch_norm_impl_index) allocates an empty "reserve"
    # tensor, cuDNN's workspace, before the kernel; ember makes the same call, so a dispatch
    # mode counts the same ops
    aten.empty.memory_format([0], dtype=uint8, layout=strided, device=input.device)
    return aten.native_batch_norm.default(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )[0]


# PyTorch's functionalization rewrites a training ``native_batch_norm`` (which writes its
# running statistics without declaring it: NOTE [undeclared writes]) to this op, which
# returns the new statistics instead; ember's tracer does the same (NOTE [functional
# tracing]). An op, not a function, as PyTorch's.
define(
    "_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, "
    "Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) -> "
    "(Tensor, Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)",
    variants=(),
)


@impl(aten._native_batch_norm_legit_functional.default, _CIA)
def native_batch_norm_functional(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor,
    running_var: Tensor,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """``native_batch_norm`` on copies of the running statistics, returned with its result:
    the arguments are not written."""
    mean, var = aten.clone.default(running_mean), aten.clone.default(running_var)
    out, save_mean, save_rstd = aten.native_batch_norm.default(
        input, weight, bias, mean, var, training, momentum, eps
    )
    return out, save_mean, save_rstd, mean, var


@impl(aten.nll_loss.default, _CIA)
def nll_loss(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = MEAN,
    ignore_index: int = -100,
) -> Tensor:
    return aten.nll_loss_forward.default(self, target, weight, reduction, ignore_index)[0]


@impl(aten.nll_loss_nd.default, _CIA)
def nll_loss_nd(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = MEAN,
    ignore_index: int = -100,
) -> Tensor:
    if self.ndim < 1:
        raise ValueError(f"nll_loss_nd: Expected 1 or more dimensions (got {self.ndim})")
    check_nll_batch(self, target)
    if self.ndim <= 2:  # through nll_loss, as PyTorch's (autocast's float32 list has it)
        return aten.nll_loss.default(self, target, weight, reduction, ignore_index)
    n, c = self.shape[0], self.shape[1]
    if tuple(target.shape) != (n, *self.shape[2:]):
        raise RuntimeError(
            f"nll_loss_nd: expected target of size {[n, *self.shape[2:]]}, got {list(target.shape)}"
        )
    flat = self.movedim(1, -1).reshape(-1, c)
    out = aten.nll_loss_forward.default(flat, target.reshape(-1), weight, reduction, ignore_index)[
        0
    ]
    return out.reshape(target.shape) if reduction == NONE else out


@impl(aten.cross_entropy_loss.default, _CIA)
def cross_entropy_loss(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = MEAN,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Tensor:
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    ndim = self.ndim
    class_dim = 0 if ndim == 1 else 1
    # The parts, called as ops, not as methods: a composite's inner calls dispatch below
    # __torch_function__, as PyTorch's C++ composites do (and faster).
    logp = aten._log_softmax.default(self, class_dim, False)
    floating = target.dtype.is_floating_point
    if not floating and label_smoothing <= 0:  # class indices: the common case
        check_nll_batch(self, target)
        if 1 <= ndim <= 2:
            return aten.nll_loss_forward.default(logp, target, weight, reduction, ignore_index)[0]
        return aten.nll_loss_nd.default(logp, target, weight, reduction, ignore_index)
    c = self.shape[class_dim]
    wshape = [1] * ndim
    wshape[class_dim] = c
    w = None if weight is None else weight.reshape(wshape)
    if floating:  # class probabilities
        if tuple(target.shape) != tuple(self.shape):
            raise RuntimeError(
                f"cross_entropy: Expected target of shape {list(self.shape)} for "
                f"class probabilities, got {list(target.shape)}"
            )
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target if w is None else logp * target * w
        loss = -prod.sum(class_dim)
        if reduction == MEAN:
            return loss.sum() / (self.numel() // c) if self.numel() else loss.sum() / 0.0
        return reduce_loss(loss, reduction)
    nll = aten.nll_loss_nd.default(logp, target, weight, reduction, ignore_index)
    smooth = -(logp if w is None else logp * w).sum(class_dim)
    ignored = target == ignore_index
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == MEAN:
        if weight is None:
            kept = (~ignored).sum()
            smooth = smooth.sum() / kept
        else:
            safe = target.masked_fill(ignored, 0)
            smooth = (
                smooth.sum() / weight[safe.reshape(-1)].masked_fill(ignored.reshape(-1), 0.0).sum()
            )
    elif reduction == SUM:
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


@impl(aten.l1_loss.default, _CIA)
def l1_loss(self: Tensor, target: Tensor, reduction: int = MEAN) -> Tensor:
    return reduce_loss((self - target).abs(), reduction)


@impl(aten.one_hot.default, _CIA)
def one_hot(self: Tensor, num_classes: int = -1) -> Tensor:
    if self.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if self.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("one_hot: Can not infer total number of classes from empty tensor.")
        return aten.zeros.default([*self.shape, num_classes], dtype=int64, device=self.device)
    if self.device.type == "meta":
        if num_classes == -1:
            raise RuntimeError("one_hot: Can not infer total number of classes from meta tensor.")
        return aten.zeros.default([*self.shape, num_classes], dtype=int64, device=self.device)
    lo_t, hi_t = aten.aminmax.default(self)  # PyTorch's one pass for both bounds
    lo, hi = int(lo_t.item()), int(hi_t.item())
    if lo < 0:
        raise RuntimeError("one_hot: Class values must be non-negative.")
    if num_classes == -1:
        num_classes = hi + 1
    elif hi >= num_classes:
        raise RuntimeError("one_hot: Class values must be smaller than num_classes.")
    out = aten.zeros.default(
        [*self.shape, num_classes], dtype=int64, layout=strided, device=self.device
    )
    return aten.scatter_.value(out, -1, self.unsqueeze(-1), 1)


@impl(aten.dropout.default, _CIA)
def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if not train or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return aten.mul.Tensor(input, aten.zeros.default([], dtype=input.dtype))
    # PyTorch's CPU dropout (NOTE [torch draws]): a Bernoulli(1 - p) noise tensor in the
    # input's dtype, divided by 1 - p, times the input (native_dropout is its GPU path)
    noise = aten.bernoulli_.float(aten.empty_like.default(input), 1 - p)
    return aten.mul.Tensor(input, aten.div_.Scalar(noise, 1 - p))


@impl(aten.linear.default, _CIA)
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    # PyTorch's choices (at::linear), so a dispatch mode sees its ops: addmm for a matrix;
    # for a contiguous input with a bias, addmm on its (N*L, in) view; otherwise matmul (which
    # folds the batch into one mm when the weight requires grad) and the bias added, out of
    # place under a mode or for a subclass (PyTorch's isTensorSubclassLike), else in place
    if bias is not None and input.ndim == 2:
        return aten.addmm.default(bias, input, weight.t())
    if bias is not None and input.is_contiguous() and (input.ndim == 3 or bias.ndim == 1):
        batch = math.prod(input.shape[:-1])  # not -1: ambiguous when in_features is 0
        flat = aten.view.default(input, [batch, input.shape[-1]])
        out = aten.addmm.default(bias, flat, weight.t())
        return aten.view.default(out, [*input.shape[:-1], out.shape[1]])
    out = input.matmul(weight.t())
    if bias is None:
        return out
    if python_key_sees(out) or python_key_sees(bias):
        return aten.add.Tensor(out, bias)
    return aten.add_.Tensor(out, bias)


@impl(aten.scaled_dot_product_attention.default, _CIA)
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    # NOTE [attention math]: PyTorch's CPU choice between its fused op and its math path
    # (NOTE [attention on CPU]); the math path is PyTorch's composition, whose
    # _safe_softmax gives 0 for a query row every key of which is masked out (its output
    # and gradients are 0, not NaN); a NaN score stays NaN.
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "scaled_dot_product_attention: _scaled_dot_product_attention: Explicit "
            "attn_mask should not be set when is_causal=True"
        )
    if SDP_ENABLED["flash"] and flash_applies(query, key, value, attn_mask, dropout_p, enable_gqa):
        # PyTorch's fused CPU op (NOTE [attention on CPU]), a boolean mask made additive first
        if attn_mask is not None and attn_mask.dtype is bool_:
            opts = {"dtype": query.dtype, "device": query.device}
            zero = aten.scalar_tensor.default(0.0, **opts)
            attn_mask = aten.where.self(
                attn_mask, zero, aten.scalar_tensor.default(-math.inf, **opts)
            )
        return aten._scaled_dot_product_flash_attention_for_cpu.default(  # type: ignore[no-any-return]
            query, key, value, dropout_p, is_causal, attn_mask=attn_mask, scale=scale
        )[0]
    if not SDP_ENABLED["math"]:
        raise RuntimeError(
            "scaled_dot_product_attention: no viable backend: the math kernel is off and the "
            "fused cpu kernel is off or does not take these arguments (4-D inputs, no "
            "dropout); allow SDPBackend.MATH (or FLASH_ATTENTION) in nn.attention.sdpa_kernel"
        )
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if heads % kv_heads:
            raise RuntimeError(
                f"scaled_dot_product_attention: number of heads in query ({heads}) must be "
                f"divisible by the number of heads in key and value ({kv_heads})"
            )
        key, value = (_repeat_heads(t, heads // kv_heads) for t in (key, value))
    # PyTorch's math path (_scaled_dot_product_attention_math): query and key each scaled
    # by the square root of the scale, the mask added, _safe_softmax, dropout
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    root = math.sqrt(abs(s))
    q = aten.mul.Scalar(query, root if s >= 0 else -root)
    scores = q.matmul(aten.mul.Scalar(key.transpose(-2, -1), root))
    if is_causal:
        n_q, n_k = query.shape[-2], key.shape[-2]
        ones = aten.ones.default([n_q, n_k], dtype=bool_, layout=strided, device=query.device)
        attn_mask = aten.tril.default(ones)
    if attn_mask is not None:
        if attn_mask.dtype is bool_:  # made additive: where(mask, 0, -inf)
            opts = {"dtype": query.dtype, "device": query.device}
            ninf = aten.scalar_tensor.default(-math.inf, **opts)
            zero = aten.scalar_tensor.default(0.0, layout=strided, **opts)
            attn_mask = aten.where.self(attn_mask, zero, ninf)
        if python_key_sees(scores) or python_key_sees(attn_mask):
            scores = aten.add.Tensor(scores, attn_mask)
        else:
            scores = aten.add_.Tensor(scores, attn_mask)
    attn = aten._safe_softmax.default(scores, -1)
    if dropout_p > 0.0:
        attn = aten.dropout.default(attn, dropout_p, True)
    return attn.matmul(value)


def _repeat_heads(t: Tensor, r: int) -> Tensor:
    """Each head of ``(..., H, S, D)`` repeated ``r`` times in place (repeat_interleave)."""
    shape = list(t.shape)
    wide = t.unsqueeze(-3).expand([*shape[:-2], r, *shape[-2:]])
    return wide.reshape([*shape[:-3], shape[-3] * r, *shape[-2:]])
