"""The spatial nn ops: convolution in 1-3 dims and transposed, pooling (plain and adaptive),
group and instance norm, channel dropout, padding modes, resampling (``upsample_*``,
``grid_sampler``, ``affine_grid_generator``), ``pixel_shuffle`` and ``im2col``/``col2im``.

Schemas are PyTorch's (``native_functions.yaml``). The shape rules below are shared by the CPU
kernels and the Meta rules (``ember/backends/*/spatial.py``) so both raise the same errors;
the ops PyTorch writes as compositions (``conv1d``, ``max_pool1d``, ``adaptive_avg_pool2d``,
``group_norm``, ``instance_norm``, ``pad``, the ``.vec`` upsample overloads...) are composed
here the same way, so ``__torch_dispatch__`` code and the lazy device see PyTorch's parts.
Differentiable kernels go through PyTorch's backward ops (NOTE [nn backward ops] in
``nn.py``), whose derivative lines are in ``ember/autograd/derivatives_spatial.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import define
from ember.ops.native.nn import expand_param
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_FN = ("function",)

# upsampling: (name, spatial dims, kind); kind is "nearest", "exact", "linear" or "cubic"
UPSAMPLE = (
    ("upsample_nearest1d", 1, "nearest"),
    ("upsample_nearest2d", 2, "nearest"),
    ("upsample_nearest3d", 3, "nearest"),
    ("_upsample_nearest_exact1d", 1, "exact"),
    ("_upsample_nearest_exact2d", 2, "exact"),
    ("_upsample_nearest_exact3d", 3, "exact"),
    ("upsample_linear1d", 1, "linear"),
    ("upsample_bilinear2d", 2, "linear"),
    ("upsample_trilinear3d", 3, "linear"),
    ("upsample_bicubic2d", 2, "cubic"),
    # antialiased (``interpolate(..., antialias=True)``): NOTE [antialiased resampling]
    ("_upsample_bilinear2d_aa", 2, "linear_aa"),
    ("_upsample_bicubic2d_aa", 2, "cubic_aa"),
)
#: the kinds whose ops take ``align_corners``
INTERPOLATING_KINDS = ("linear", "cubic", "linear_aa", "cubic_aa")
#: the names of an ``n``-d upsample op's optional scales, as its schema spells them
SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}


def _upsample_schemas(name: str, n: int, kind: str) -> tuple[str, str, str]:
    scales = ", ".join(f"float? {s}=None" for s in SCALE_NAMES[n])
    corners = ", bool align_corners" if kind in INTERPOLATING_KINDS else ""
    return (
        f"{name}(Tensor self, SymInt[{n}] output_size{corners}, {scales}) -> Tensor",
        f"{name}.vec(Tensor input, SymInt[]? output_size{corners}, float[]? scale_factors) "
        "-> Tensor",
        f"{name}_backward(Tensor grad_output, SymInt[{n}] output_size, SymInt[{n + 2}] "
        f"input_size{corners}, {scales}) -> Tensor",
    )


_SCHEMAS = (
    # convolution (``convolution`` itself lives in nn.py)
    "conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], "
    "SymInt[1] padding=[0], SymInt[1] dilation=[1], SymInt groups=1) -> Tensor",
    "conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], "
    'str padding="valid", SymInt[1] dilation=[1], SymInt groups=1) -> Tensor',
    "conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], "
    'str padding="valid", SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor',
    "conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], "
    "SymInt[3] padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor",
    "conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, "
    'SymInt[3] stride=[1, 1, 1], str padding="valid", SymInt[3] dilation=[1, 1, 1], '
    "SymInt groups=1) -> Tensor",
    "_convolution_mode(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
    "str padding, SymInt[] dilation, SymInt groups) -> Tensor",
    "conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], "
    "SymInt[1] padding=[0], SymInt[1] output_padding=[0], SymInt groups=1, "
    "SymInt[1] dilation=[1]) -> Tensor",
    "conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, "
    "SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], "
    "SymInt groups=1, SymInt[2] dilation=[1, 1]) -> Tensor",
    "conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, "
    "SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], "
    "SymInt[3] output_padding=[0, 0, 0], SymInt groups=1, SymInt[3] dilation=[1, 1, 1]) "
    "-> Tensor",
    # pooling
    "max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], "
    "int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)",
    "max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
    "int[1] dilation=[1], bool ceil_mode=False) -> Tensor",
    "max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], "
    "int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, "
    "int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> Tensor",
    "max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
    "int[3] dilation=1, bool ceil_mode=False) -> Tensor",
    "avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
    "bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
    "avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
    "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    "avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, "
    "int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
    "adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
    "adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor",
    "adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
    "_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
    "_adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor",
    "adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)",
    "adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
    "adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor",
    "adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)",
    "adaptive_max_pool3d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor",
    "fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, "
    "Tensor random_samples) -> (Tensor, Tensor)",
    "fractional_max_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] output_size, Tensor indices) -> Tensor",
    "fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, "
    "Tensor random_samples) -> (Tensor, Tensor)",
    "fractional_max_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, "
    "int[3] output_size, Tensor indices) -> Tensor",
    # normalization
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
    "SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)",
    "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, "
    "Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> "
    "(Tensor, Tensor, Tensor)",
    "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
    "instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool use_input_stats, float momentum, float eps, "
    "bool cudnn_enabled) -> Tensor",
    # channel dropout
    "feature_dropout(Tensor input, float p, bool train) -> Tensor",
    "feature_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
    # padding (``constant_pad_nd`` and ``pad`` live in nn.py)
    "reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor",
    "reflection_pad1d_backward(Tensor grad_output, Tensor self, SymInt[2] padding) -> Tensor",
    "reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor",
    "reflection_pad2d_backward(Tensor grad_output, Tensor self, SymInt[4] padding) -> Tensor",
    "reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor",
    "reflection_pad3d_backward(Tensor grad_output, Tensor self, SymInt[6] padding) -> Tensor",
    "replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor",
    "replication_pad1d_backward(Tensor grad_output, Tensor self, SymInt[2] padding) -> Tensor",
    "replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor",
    "replication_pad2d_backward(Tensor grad_output, Tensor self, SymInt[4] padding) -> Tensor",
    "replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor",
    "replication_pad3d_backward(Tensor grad_output, Tensor self, SymInt[6] padding) -> Tensor",
    "_pad_circular(Tensor self, SymInt[] pad) -> Tensor",
    "_pad_enum(Tensor self, SymInt[] pad, int mode, float? value=None) -> Tensor",
    # resampling
    *(s for name, n, kind in UPSAMPLE for s in _upsample_schemas(name, n, kind)),
    "grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor",
    "grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor",
    "grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, "
    "int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> "
    "(Tensor, Tensor)",
    "grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor",
    "grid_sampler_3d_backward(Tensor grad_output, Tensor input, Tensor grid, "
    "int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> "
    "(Tensor, Tensor)",
    "affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor",
    "affine_grid_generator_backward(Tensor grad, SymInt[] size, bool align_corners) -> Tensor",
    "pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",
    "pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
    "channel_shuffle(Tensor self, SymInt groups) -> Tensor",
    "im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) "
    "-> Tensor",
    "col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
    "int[2] padding, int[2] stride) -> Tensor",
)
for _schema in _SCHEMAS:
    define(_schema, variants=_FN)

# ``pad``'s modes, as aten's ``padding_mode`` enum numbers them
PAD_MODES = {"reflect": 0, "replicate": 1, "circular": 2, "constant": 3}
# ``grid_sampler``'s enums
INTERPOLATION = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}

# --------------------------------------------------------------------------- shared shape rules


def check_rank(shape: Sequence[int], low: int, high: int, op: str) -> None:
    """``low <= len(shape) <= high`` (PyTorch's ``checkDimRange``)."""
    if not low <= len(shape) <= high:
        raise RuntimeError(
            f"{op}: Expected {low} to {high} dimensions, but got {len(shape)}-dimensional tensor "
            f"of size {list(shape)}"
        )


def check_floating(x: Tensor, op: str) -> None:
    """Ops PyTorch implements for floating dtypes only raise NotImplementedError for others."""
    if not x.dtype.is_floating_point:
        raise NotImplementedError(
            f"{op}: \"{op}\" not implemented for '{x.dtype._short}'; pass a floating tensor"
        )


def check_not_bool(x: Tensor, op: str) -> None:
    if x.dtype.name == "bool":
        raise NotImplementedError(f"{op}: \"{op}\" not implemented for 'Bool'")


def adaptive_output(shape: Sequence[int], output_size: Sequence[int], n: int, op: str) -> tuple:
    """The output shape of an ``n``-d adaptive pooling op; raises PyTorch's errors."""
    if len(shape) not in (n + 1, n + 2):
        raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D tensor, but got {list(shape)}")
    if len(output_size) != n:
        raise RuntimeError(f"{op}: output_size must be {n}, got {list(output_size)}")
    for i in range(1, len(shape)):  # as PyTorch: an unbatched input's dim 0 may be empty
        if shape[i] <= 0:
            raise RuntimeError(
                f"{op}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(shape)} with dimension {i} being empty"
            )
    if any(o < 0 for o in output_size):
        raise RuntimeError(
            f"{op}: elements of output_size must be greater than or equal to 0 but received "
            f"{list(output_size)}"
        )
    return (*shape[:-n], *output_size)


def fractional_output(
    self: Tensor,
    kernel_size: Sequence[int],
    output_size: Sequence[int],
    random_samples: Tensor,
    n: int,
) -> tuple[int, ...]:
    """The output shape of ``fractional_max_pool{n}d``, after PyTorch's checks (in its
    order, with its messages: 2-d needs ``output + kernel - 1 <= input`` per dim, 3-d
    ``output + kernel - 1 < input``, checked time, width, height)."""
    op = f"fractional_max_pool{n}d"
    shape = tuple(self.shape)
    if random_samples.dtype != self.dtype:
        raise RuntimeError(
            f"{op}: Expect _random_samples to have the same dtype as input (input "
            f"{self.dtype}, _random_samples {random_samples.dtype})"
        )
    if random_samples.ndim != 3:
        raise RuntimeError(
            f"{op}: Expect _random_samples to have 3 dimensions, got {random_samples.ndim}"
        )
    where = f"{op}()" if n == 2 else f"{op}_out()"
    if len(shape) not in (n + 1, n + 2):
        raise RuntimeError(f"{where}: Expected {n + 1}D or {n + 2}D tensor, but got: {list(shape)}")
    batch, channels = (1, shape[0]) if len(shape) == n + 1 else shape[:2]
    samples = tuple(random_samples.shape)
    if samples[0] < batch:
        raise RuntimeError(
            f"{op}: Expect _random_samples.size(0) no less then input batch size ({batch}), "
            f"got _random_samples of shape {list(samples)}"
        )
    if samples[1] != channels:
        raise RuntimeError(
            f"{op}: Expect _random_samples.size(1) equals to input channel size ({channels}), "
            f"got _random_samples of shape {list(samples)}"
        )
    if samples[2] != n:
        raise RuntimeError(f"{op}: Expect _random_samples.size(2) equals to {n}; got {samples[2]}.")
    if len(kernel_size) != n or len(output_size) != n:
        raise RuntimeError(
            f"{op}: kernel_size and output_size must have {n} elements, got {list(kernel_size)} "
            f"and {list(output_size)}"
        )
    names = ("height", "width") if n == 2 else ("time", "width", "height")
    dims = (0, 1) if n == 2 else (0, 2, 1)
    for name, d in zip(names, dims, strict=True):
        size, k, o = shape[len(shape) - n + d], kernel_size[d], output_size[d]
        if (o + k - 1 > size) if n == 2 else (o + k - 1 >= size):
            raise RuntimeError(
                f"{where}: pool {name} {k} too large relative to input {name} {size} (output "
                f"{name} {o}: output + kernel - 1 must be {'at most' if n == 2 else 'below'} "
                f"the input's {name})"
            )
    return (*shape[:-n], *output_size)


def adaptive_bounds(size: int, out: int) -> tuple[list[int], list[int]]:
    """Start and end (exclusive) of each adaptive window: ``floor(o * size / out)`` to
    ``ceil((o + 1) * size / out)``."""
    starts = [(o * size) // out for o in range(out)]
    ends = [-((-(o + 1) * size) // out) for o in range(out)]
    return starts, ends


def pad_output(
    shape: Sequence[int], padding: Sequence[int], n: int, op: str, reflect: bool
) -> tuple[int, ...]:
    """The output shape of ``reflection_pad{n}d`` / ``replication_pad{n}d``: ``padding`` holds
    (left, right) pairs from the last dim backwards; negative values crop."""
    if len(padding) != 2 * n:
        raise RuntimeError(f"{op}: padding size is expected to be {2 * n}, but got: {len(padding)}")
    if len(shape) not in (n + 1, n + 2) or any(s == 0 for s in shape[-n - 1 :]):
        raise RuntimeError(
            f"{op}: Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 batch size "
            f"and other non-zero dimensions for input, but got: {list(shape)}"
        )
    out = list(shape)
    for i in range(n):
        dim = len(shape) - 1 - i
        lo, hi = padding[2 * i], padding[2 * i + 1]
        if reflect and (lo >= shape[dim] or hi >= shape[dim]):
            raise RuntimeError(
                f"{op}: Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                f"{list(shape)}"
            )
        out[dim] = shape[dim] + lo + hi
        if out[dim] < 1:
            raise RuntimeError(
                f"{op}: input (size {shape[dim]} at dimension {dim}) is too small for padding "
                f"({lo}, {hi}): calculated output size {out[dim]}"
            )
    return tuple(out)


def upsample_check(
    input_size: Sequence[int], output_size: Sequence[int], n: int, op: str
) -> tuple[int, ...]:
    """The full output shape of an ``n``-d upsample op of ``input_size``; raises PyTorch's
    errors."""
    if len(output_size) != n:
        raise RuntimeError(
            f"{op}: It is expected output_size equals to {n}, but got size {len(output_size)}"
        )
    if len(input_size) != n + 2:
        raise RuntimeError(
            f"{op}: It is expected input_size equals to {n + 2}, but got size {len(input_size)}; "
            "pass a batched (N, C, *spatial) input"
        )
    if input_size[1] == 0:
        raise RuntimeError(
            f"{op}: Non-empty {n + 2}D data tensor expected but got a tensor with sizes "
            f"{list(input_size)}"
        )
    if any(s <= 0 for s in input_size[2:]) or any(o <= 0 for o in output_size):
        raise RuntimeError(
            f"{op}: Input and output sizes should be greater than 0, but got input "
            f"{list(input_size[2:])} output {list(output_size)}"
        )
    return (input_size[0], input_size[1], *output_size)


def check_upsample_dtype(x: Tensor, kind: str, op: str) -> None:
    """Upsampling takes floating inputs, and uint8 ones in the nearest modes."""
    if x.dtype.is_floating_point or (x.dtype.name == "uint8" and kind in ("nearest", "exact")):
        return
    if x.dtype.name == "uint8":  # PyTorch rounds uint8 interpolation in fixed point
        raise NotImplementedError(
            f"{op}: uint8 input is not supported by ember for interpolating modes; convert "
            "to float first"
        )
    raise NotImplementedError(f"{op}: \"{op}\" not implemented for '{x.dtype._short}'")


def check_grad_output(grad_output: Tensor, shape: Sequence[int], op: str) -> None:
    """A backward op's ``grad_output`` has the forward output's shape."""
    if tuple(grad_output.shape) != tuple(shape):
        raise RuntimeError(
            f"{op}: Expected grad_output to have the same shape as output; output has size "
            f"{list(shape)} but grad_output has size {list(grad_output.shape)}"
        )


def check_fractional_backward(
    grad_output: Tensor, self: Tensor, indices: Tensor, name: str
) -> None:
    """``fractional_max_pool{2,3}d_backward``'s checks, for its CPU and Meta kernels: the
    forward output's shape, the input's dtype."""
    op = f"{name}_backward"
    check_grad_output(grad_output, indices.shape, op)
    if grad_output.dtype != self.dtype:
        raise RuntimeError(
            f"{op}: expected grad_output of the input's dtype {self.dtype}, got "
            f"{grad_output.dtype}; cast it with .to(input.dtype)"
        )


def upsample_output_size(
    input_size: Sequence[int], output_size: Sequence[int] | None, scale_factors: Any, op: str
) -> list[int]:
    """The spatial output size of an upsample ``.vec`` overload (PyTorch's
    ``compute_output_size``): the given size, or each input size times its scale, truncated."""
    n = len(input_size) - 2
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError(f"{op}: Must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        if len(output_size) != n:
            raise RuntimeError(
                f"{op}: expected output_size of {n} elements for input of size "
                f"{list(input_size)}, got {list(output_size)}"
            )
        return list(output_size)
    if len(scale_factors) != n:
        raise RuntimeError(
            f"{op}: expected scale_factors of {n} elements for input of size "
            f"{list(input_size)}, got {list(scale_factors)}"
        )
    return [int(input_size[i + 2] * scale_factors[i]) for i in range(n)]


def grid_sampler_check(input: Tensor, grid: Tensor, n: int, interpolation_mode: int) -> None:
    """PyTorch's ``check_grid_sampler_common`` and ``check_grid_sampler_{2,3}d``."""
    op = "grid_sampler"
    if input.dtype is not grid.dtype:
        raise RuntimeError(
            f"{op}(): expected input and grid to have the same dtype, but input has "
            f"{input.dtype} and grid has {grid.dtype}"
        )
    if grid.ndim == 0 or grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(
            f"{op}(): expected grid to have size {input.ndim - 2} in last dimension, but got "
            f"grid with sizes {list(grid.shape)}"
        )
    if input.ndim != n + 2 or grid.ndim != n + 2:
        raise RuntimeError(
            f"{op}(): expected {n + 2}D input and grid with same number of dimensions, but got "
            f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            f"{op}(): expected grid and input to have same batch size, but got input with sizes "
            f"{list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    for i in range(2, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError(
                f"{op}(): expected input to have non-empty spatial dimensions, but input has "
                f"sizes {list(input.shape)} with dimension {i} being empty"
            )
    if n == 3 and interpolation_mode == INTERPOLATION["bicubic"]:
        raise RuntimeError(f"{op}(): bicubic interpolation only supports 4D input")
    check_floating(input, f"grid_sampler_{n}d")


def affine_grid_shape(theta: Tensor, size: Sequence[int]) -> tuple[int, ...]:
    """The grid shape ``affine_grid_generator`` makes: ``(N, *spatial, n)``."""
    op = "affine_grid_generator"
    if len(size) not in (4, 5):
        raise RuntimeError(
            f"{op}: AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs, got size "
            f"{list(size)}"
        )
    n = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape) != (size[0], n, n + 1):
        raise RuntimeError(
            f"{op}: expected theta of shape [{size[0]}, {n}, {n + 1}] for size {list(size)}, "
            f"got {list(theta.shape)}"
        )
    return (size[0], *size[2:], n)


def check_channel_shuffle(shape: Sequence[int], groups: int) -> None:
    """``channel_shuffle``'s checks (PyTorch's messages)."""
    if len(shape) <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    if shape[1] % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {shape[1]} channels and "
            f"{groups} groups."
        )


def pixel_shuffle_shape(shape: Sequence[int], factor: int, op: str, up: bool) -> tuple[int, ...]:
    """The output shape of ``pixel_shuffle`` (``up``) or ``pixel_unshuffle``."""
    what = "upscale_factor" if up else "downscale_factor"
    if len(shape) < 3:
        raise RuntimeError(
            f"{op} expects input to have at least 3 dimensions, but got input with "
            f"{len(shape)} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"{op} expects a positive {what}, but got {factor}")
    c, h, w = shape[-3:]
    if up:
        if c % (factor * factor):
            raise RuntimeError(
                f"{op} expects its input's 'channel' dimension to be divisible by the square of "
                f"upscale_factor, but input.size(-3)={c} is not divisible by {factor * factor}"
            )
        return (*shape[:-3], c // (factor * factor), h * factor, w * factor)
    for name, size in (("height", h), ("width", w)):
        if size % factor:
            raise RuntimeError(
                f"{op} expects {name} to be divisible by downscale_factor, but input.size("
                f"{-2 if name == 'height' else -1})={size} is not divisible by {factor}"
            )
    return (*shape[:-3], c * factor * factor, h // factor, w // factor)


def fold_geometry(
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
    op: str,
) -> tuple[tuple[int, ...], ...]:
    """``(kernel, dilation, padding, stride)`` of ``im2col``/``col2im``, checked."""
    k, d, p, s = (
        expand_param(v, 2, name, op)
        for v, name in (
            (kernel_size, "kernel_size"),
            (dilation, "dilation"),
            (padding, "padding"),
            (stride, "stride"),
        )
    )
    for name, v, low in (("kernel size", k, 1), ("dilation", d, 1), ("stride", s, 1)):
        if any(x < low for x in v):
            raise RuntimeError(f"{op}: {name} should be greater than zero, but got {list(v)}")
    if any(x < 0 for x in p):
        raise RuntimeError(f"{op}: padding should be non-negative, but got {list(p)}")
    return k, d, p, s


def fold_blocks(
    spatial: Sequence[int], k: Sequence[int], d: Sequence[int], p: Sequence[int], s: Sequence[int]
) -> tuple[int, int]:
    """The number of sliding blocks along each of the two spatial dims."""
    return tuple(  # type: ignore[return-value]
        (spatial[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2)
    )


def check_fold_input(shape: Sequence[int], rank: int, op: str) -> None:
    """``im2col``'s (``rank`` 3) or ``col2im``'s (``rank`` 2) input check: ``rank`` dims, or
    one more for a batch (which alone may be empty), none of the others 0."""
    if len(shape) not in (rank, rank + 1) or any(x == 0 for x in shape[-rank:]):
        raise RuntimeError(
            f"{op}: Expected {rank}D or {rank + 1}D (batch mode) tensor with optional 0 dim batch "
            f"size and non-zero other dimensions for input, but got: {list(shape)}"
        )


def im2col_shape(
    shape: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> tuple[int, ...]:
    """The output shape of ``im2col``: ``(N, C * kh * kw, L)`` (or unbatched)."""
    op = "im2col"
    if len(shape) < 3:
        raise IndexError(
            f"{op}: Dimension out of range: expected a 3-D or 4-D (batch mode) input, got size "
            f"{list(shape)}"
        )
    k, d, p, s = fold_geometry(kernel_size, dilation, padding, stride, op)
    check_fold_input(shape, 3, op)
    blocks = fold_blocks(shape[-2:], k, d, p, s)
    if any(b < 1 for b in blocks):
        raise RuntimeError(
            f"{op}: Given input with spatial size {tuple(shape[-2:])}, kernel_size={k}, "
            f"dilation={d}, padding={p}, calculated shape of the array of sliding blocks as "
            f"{blocks}, but its components must be at least one."
        )
    return (*shape[:-3], shape[-3] * k[0] * k[1], blocks[0] * blocks[1])


def col2im_shape(
    shape: Sequence[int],
    output_size: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> tuple[int, ...]:
    """The output shape of ``col2im``: ``(N, C, *output_size)`` (or unbatched)."""
    op = "col2im"
    k, d, p, s = fold_geometry(kernel_size, dilation, padding, stride, op)
    out = expand_param(output_size, 2, "output_size", op)
    check_fold_input(shape, 2, op)
    kk = k[0] * k[1]
    if shape[-2] % kk:
        raise RuntimeError(
            f"{op}: Expected size of input's dimension {len(shape) - 2} to be divisible by the "
            f"product of kernel_size, but got input.size({len(shape) - 2})={shape[-2]} and "
            f"kernel_size={k}."
        )
    blocks = fold_blocks(out, k, d, p, s)
    if any(b < 1 for b in blocks) or blocks[0] * blocks[1] != shape[-1]:
        raise RuntimeError(
            f"{op}: Given output_size={out}, kernel_size={k}, dilation={d}, padding={p}, "
            f"stride={s}, expected size of input's dimension {len(shape) - 1} to match the "
            f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
            f"{blocks[0] * blocks[1]}, but got input.size({len(shape) - 1})={shape[-1]}."
        )
    return (*shape[:-2], shape[-2] // kk, *out)


def check_group_norm(
    input: Tensor, weight: Any, bias: Any, n: int, c: int, hxw: int, group: int
) -> None:
    """``native_group_norm``'s checks: sizes that agree with the input and the group count."""
    op = "native_group_norm"
    if group <= 0 or c % group:
        raise RuntimeError(
            f"{op}: Expected number of channels in input to be divisible by num_groups, but got "
            f"C={c} and num_groups={group}"
        )
    if input.numel() != n * c * hxw:
        raise RuntimeError(
            f"{op}: Expected input of {n} * {c} * {hxw} elements (N * C * HxW), got input of "
            f"size {list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(
                f"{op}: Expected {name} to be a vector of size equal to the number of channels "
                f"in input ({c}), but got {name} of shape {list(t.shape)}"
            )


# --------------------------------------------------------------------------- decompositions

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


def _batchify(input: Tensor, n: int, op: str) -> tuple[Tensor, bool]:
    """``input`` with a batch dim (and whether it had one): PyTorch's ``batchify``."""
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {op}, but got input "
            f"of size: {list(input.shape)}"
        )
    if input.ndim == n + 2:
        return input, True
    return aten.unsqueeze.default(input, 0), False


def _unbatch(out: Tensor, batched: bool) -> Tensor:
    return out if batched else aten.squeeze.dim(out, 0)


def _conv(
    n: int,
    op: str,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    transposed: bool = False,
    output_padding: Any = 0,
) -> Tensor:
    """``conv{n}d`` / ``conv_transpose{n}d``: ``convolution`` of the batched input."""
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(
            f"{op}: Input type ({input.dtype}) and bias type ({bias.dtype}) should be the same"
        )
    x, batched = _batchify(input, n, op)
    s, p, d, o = (
        expand_param(v, n, name, op)
        for v, name in (
            (stride, "stride"),
            (padding, "padding"),
            (dilation, "dilation"),
            (output_padding, "output_padding"),
        )
    )
    out = aten.convolution.default(x, weight, bias, s, p, d, transposed, o, groups)
    return _unbatch(out, batched)


def _conv_mode(
    n: int,
    op: str,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: str,
    dilation: Any,
    groups: int,
) -> Tensor:
    """``conv{n}d.padding``: ``_convolution_mode`` of the batched input."""
    x, batched = _batchify(input, n, op)
    s, d = expand_param(stride, n, "stride", op), expand_param(dilation, n, "dilation", op)
    return _unbatch(aten._convolution_mode.default(x, weight, bias, s, padding, d, groups), batched)


@impl(aten.conv1d.default, _CIA)
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1,),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    groups: int = 1,
) -> Tensor:
    return _conv(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@impl(aten.conv3d.default, _CIA)
def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1, 1, 1),
    padding: Sequence[int] = (0, 0, 0),
    dilation: Sequence[int] = (1, 1, 1),
    groups: int = 1,
) -> Tensor:
    return _conv(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def _register_conv_padding(n: int) -> None:
    name = f"conv{n}d"

    def conv_padding(
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        stride: Sequence[int] = (1,) * n,
        padding: str = "valid",
        dilation: Sequence[int] = (1,) * n,
        groups: int = 1,
    ) -> Tensor:
        return _conv_mode(n, name, input, weight, bias, stride, padding, dilation, groups)

    impl(getattr(aten, name).padding, _CIA, conv_padding)


for _n in (1, 2, 3):
    _register_conv_padding(_n)


@impl(aten._convolution_mode.default, _CIA)
def _convolution_mode(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Sequence[int],
    padding: str,
    dilation: Sequence[int],
    groups: int,
) -> Tensor:
    n = weight.ndim - 2
    zeros = [0] * max(n, 1)
    if padding == "valid":
        return aten.convolution.default(
            input, weight, bias, stride, zeros, dilation, False, zeros, groups
        )
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'; use 'valid' or 'same'")
    return _convolution_same(input, weight, bias, stride, dilation, groups)


def _convolution_same(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> Tensor:
    """``padding='same'``: half the kernel's span on each side; an odd span's extra position
    goes on the right, by padding the input first (PyTorch's ``_convolution_same``)."""
    n = weight.ndim - 2
    if n < 1 or input.ndim != weight.ndim:
        raise RuntimeError(
            f"convolution: Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional "
            f"weight {list(weight.shape)}, but got {input.ndim}-dimensional input of size "
            f"{list(input.shape)} instead"
        )
    s = expand_param(stride, n, "stride", "convolution")
    d = expand_param(dilation, n, "dilation", "convolution")
    if any(x != 1 for x in s):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left = [d[i] * (weight.shape[2 + i] - 1) // 2 for i in range(n)]
    right = [d[i] * (weight.shape[2 + i] - 1) - left[i] for i in range(n)]
    if left != right:
        pad_nd = [0] * (2 * n)
        for i in range(n):
            pad_nd[2 * (n - 1 - i) + 1] = right[i] - left[i]  # the extra position, on the right
        input = aten.constant_pad_nd.default(input, pad_nd, 0)  # noqa: A001
    return aten.convolution.default(input, weight, bias, s, left, d, False, [0] * n, groups)


def _register_conv_transpose(n: int, overload: str) -> None:
    name = f"conv_transpose{n}d"
    one, zero = (1,) * n, (0,) * n

    def conv_transpose(
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        stride: Sequence[int] = one,
        padding: Sequence[int] = zero,
        output_padding: Sequence[int] = zero,
        groups: int = 1,
        dilation: Sequence[int] = one,
    ) -> Tensor:
        return _conv(
            n, name, input, weight, bias, stride, padding, dilation, groups, True, output_padding
        )

    conv_transpose.__name__ = conv_transpose.__qualname__ = name
    impl(getattr(getattr(aten, name), overload), _CIA)(conv_transpose)


for _n, _overload in ((1, "default"), (2, "input"), (3, "input")):
    _register_conv_transpose(_n, _overload)


# ----------------------------------------------------------------- 1-d pooling through 2-d


def _one(value: Any, name: str, op: str, allow_empty: bool = False) -> list[int]:
    """A 1-d pooling argument: one int (``[]`` too for a stride)."""
    v = [value] if isinstance(value, int) else list(value)
    if len(v) != 1 and not (allow_empty and not v):
        raise RuntimeError(
            f"{op}() {name} must be an int, list of ints or tuple of ints of size 1 but got "
            f"size {len(v)}"
        )
    return v


def _pool1d_args(
    self: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any, op: str
) -> tuple[list[int], list[int], list[int], list[int]]:
    """The 2-d arguments (a size-1 first dim) of a 1-d pooling op, with PyTorch's checks."""
    check_rank(self.shape, 2, 3, op)
    k = _one(kernel_size, "kernel_size", op)
    s = _one(stride, "stride", op, allow_empty=True) or k
    p = _one(padding, "padding", op)
    d = _one(dilation, "dilation", op)
    return [1, k[0]], [1, s[0]], [0, p[0]], [1, d[0]]


@impl(aten.max_pool1d_with_indices.default, _CIA)
def max_pool1d_with_indices(
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    k, s, p, d = _pool1d_args(self, kernel_size, stride, padding, dilation, "max_pool1d")
    out, idx = aten.max_pool2d_with_indices.default(
        aten.unsqueeze.default(self, -2), k, s, p, d, ceil_mode
    )
    return aten.squeeze.dim(out, -2), aten.squeeze.dim(idx, -2)


def _register_max_pool(n: int) -> None:
    """``max_pool{n}d``: the values of ``max_pool{n}d_with_indices``."""
    with_indices = getattr(aten, f"max_pool{n}d_with_indices").default
    pad, dil = ((0,), (1,)) if n == 1 else (0, 1)  # PyTorch's defaults

    def max_pool(
        self: Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int] = (),
        padding: Sequence[int] = pad,  # type: ignore[assignment]
        dilation: Sequence[int] = dil,  # type: ignore[assignment]
        ceil_mode: bool = False,
    ) -> Tensor:
        return with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]

    max_pool.__name__ = max_pool.__qualname__ = f"max_pool{n}d"
    impl(getattr(aten, f"max_pool{n}d").default, _CIA)(max_pool)


for _n in (1, 2, 3):
    _register_max_pool(_n)


@impl(aten.avg_pool1d.default, _CIA)
def avg_pool1d(
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    k, s, p, _ = _pool1d_args(self, kernel_size, stride, padding, 1, "avg_pool1d")
    out = aten.avg_pool2d.default(
        aten.unsqueeze.default(self, -2), k, s, p, ceil_mode, count_include_pad, None
    )
    return aten.squeeze.dim(out, -2)


@impl(aten.adaptive_avg_pool1d.default, _CIA)
def adaptive_avg_pool1d(self: Tensor, output_size: Sequence[int]) -> Tensor:
    check_rank(self.shape, 2, 3, "adaptive_avg_pool1d")
    o = _one(output_size, "output_size", "adaptive_avg_pool1d")
    out = aten.adaptive_avg_pool2d.default(aten.unsqueeze.default(self, -2), [1, o[0]])
    return aten.squeeze.dim(out, -2)


def _adaptive_avg(self: Tensor, output_size: Sequence[int], n: int) -> Tensor:
    """``adaptive_avg_pool{n}d``: a mean over the spatial dims for output size 1, else the
    kernel (PyTorch's decomposition)."""
    op = f"adaptive_avg_pool{n}d"
    size = expand_param(output_size, n, "output_size", op)
    if any(o < 0 for o in size):
        raise RuntimeError(
            f"{op}: elements of output_size must be greater than or equal to 0 but received "
            f"{list(size)}"
        )
    if all(o == 1 for o in size):
        return aten.mean.dim(self, list(range(-n, 0)), True)
    return getattr(aten, f"_adaptive_avg_pool{n}d").default(self, list(size))


@impl(aten.adaptive_avg_pool2d.default, _CIA)
def adaptive_avg_pool2d(self: Tensor, output_size: Sequence[int]) -> Tensor:
    return _adaptive_avg(self, output_size, 2)


@impl(aten.adaptive_avg_pool3d.default, _CIA)
def adaptive_avg_pool3d(self: Tensor, output_size: Sequence[int]) -> Tensor:
    return _adaptive_avg(self, output_size, 3)


@impl(aten.adaptive_max_pool1d.default, _CIA)
def adaptive_max_pool1d(self: Tensor, output_size: Sequence[int]) -> tuple[Tensor, Tensor]:
    op = "adaptive_max_pool1d"
    check_rank(self.shape, 2, 3, op)
    o = _one(output_size, "output_size", op)
    for i in range(1, self.ndim):
        if self.shape[i] <= 0:
            raise RuntimeError(
                f"{op}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(self.shape)} with dimension {i} being empty"
            )
    out, idx = aten.adaptive_max_pool2d.default(aten.unsqueeze.default(self, -2), [1, o[0]])
    return aten.squeeze.dim(out, -2), aten.squeeze.dim(idx, -2)


# ----------------------------------------------------------------------------- normalization


@impl(aten.group_norm.default, _CIA)
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
    cudnn_enabled: bool = True,
) -> Tensor:
    if input.ndim < 2:
        raise IndexError(
            f"group_norm: Dimension out of range: the input needs dims (N, C, ...), got "
            f"{input.ndim}-d input of size {list(input.shape)}"
        )
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0:
        raise RuntimeError(
            f"group_norm: Expected num groups to be greater than 0, got {num_groups}"
        )
    if c % num_groups:
        raise RuntimeError(
            f"group_norm: Expected number of channels in input to be divisible by num_groups, "
            f"but got input of shape {list(input.shape)} and num_groups={num_groups}"
        )
    hxw = math.prod(input.shape[2:])
    x = aten.contiguous.default(input)
    return aten.native_group_norm.default(x, weight, bias, n, c, hxw, num_groups, eps)[0]


@impl(aten.instance_norm.default, _CIA)
def instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """Batch norm of the input seen as one sample of ``N * C`` channels; the per-sample
    running statistics it updates are averaged back into the ``C`` given ones (PyTorch's
    decomposition)."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "instance_norm: Expected running_mean and running_var to be defined when "
            "use_input_stats is false"
        )
    if input.ndim < 2:
        raise RuntimeError(
            f"instance_norm: expected 2D or more input (N, C, ...), got {list(input.shape)}"
        )
    b, c = input.shape[0], input.shape[1]

    def repeat(t: Tensor | None) -> Tensor | None:
        return None if t is None else aten.repeat.default(t, [b])

    rm, rv = repeat(running_mean), repeat(running_var)
    shape = [1, b * c, *input.shape[2:]]
    x = aten.view.default(aten.contiguous.default(input), shape)
    out = aten.batch_norm.default(
        x, repeat(weight), repeat(bias), rm, rv, use_input_stats, momentum, eps, cudnn_enabled
    )
    for stat, repeated in ((running_mean, rm), (running_var, rv)):
        if stat is not None and repeated is not None:
            mean = aten.mean.dim(aten.view.default(repeated, [b, c]), [0], False)
            aten.copy_.default(stat, mean)
    return aten.view.default(out, list(input.shape))


def _feature_noise(input: Tensor, p: float) -> Tensor:
    """One keep-or-drop factor per (sample, channel): 0 or ``1 / (1 - p)``, shaped
    ``(N, C, 1, ...)``."""
    if input.ndim < 2:
        raise RuntimeError(
            "feature_dropout: Feature dropout requires at least 2 dimensions in the input, got "
            f"{input.ndim}"
        )
    shape = [input.shape[0], input.shape[1]] + [1] * (input.ndim - 2)
    noise = aten.empty.memory_format(shape, dtype=input.dtype, device=input.device)
    return aten.div_.Scalar(aten.bernoulli_.float(noise, 1 - p), 1 - p)  # as PyTorch's


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(x: Tensor, p: float, train: bool, mul: Any) -> Tensor:
    """``feature_dropout`` (``mul``: ``mul.Tensor``) or its in-place form (``mul_.Tensor``)."""
    _check_p(p)
    if p == 0 or not train or x.numel() == 0:
        return x
    if p == 1:
        return mul(x, aten.zeros.default([], dtype=x.dtype))  # type: ignore[no-any-return]
    return mul(x, _feature_noise(x, p))  # type: ignore[no-any-return]


@impl(aten.feature_dropout.default, _CIA)
def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _feature_dropout(input, p, train, aten.mul.Tensor)


@impl(aten.feature_dropout_.default, _CIA)
def feature_dropout_(self: Tensor, p: float, train: bool) -> Tensor:
    return _feature_dropout(self, p, train, aten.mul_.Tensor)


# ----------------------------------------------------------------------------------- padding


@impl(aten._pad_circular.default, _CIA)
def _pad_circular(self: Tensor, pad: Sequence[int]) -> Tensor:
    """Each padded dim, from the last backwards, is cropped by its negative pads, then wraps
    around: the left pad repeats the cropped dim's end, the right pad its start."""
    n = len(pad) // 2
    if self.ndim not in (n + 1, n + 2):
        raise RuntimeError(
            f"_pad_circular: Invalid padding size, expected 1 or 2 non-padded dimensions, which "
            f"would be equivalent to padding of length {(self.ndim - 1) * 2} or "
            f"{(self.ndim - 2) * 2} respectively but got {len(pad)}"
        )
    out = self
    for i in range(n):
        dim = self.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = self.shape[dim]
        if lo > size or hi > size:
            raise RuntimeError(
                f"_pad_circular: Padding value causes wrapping around more than once: padding "
                f"({lo}, {hi}) of dimension {dim} of size {size}"
            )
        if size + lo + hi < 0:
            raise RuntimeError(
                "_pad_circular: Negative padding value is resulting in an empty dimension"
            )
        core = aten.slice.Tensor(out, dim, max(-lo, 0), size - max(-hi, 0))
        kept = core.shape[dim]
        if max(lo, 0) > kept or max(hi, 0) > kept:  # wraps the cropped dim more than once
            raise RuntimeError(
                f"_pad_circular: padding ({lo}, {hi}) wraps dimension {dim} (of size {kept} "
                "after cropping) more than once"
            )
        parts = []
        if lo > 0:
            parts.append(aten.slice.Tensor(core, dim, kept - lo, kept))
        parts.append(core)
        if hi > 0:
            parts.append(aten.slice.Tensor(core, dim, 0, hi))
        out = parts[0] if len(parts) == 1 else aten.cat.default(parts, dim)
    return out


@impl(aten._pad_enum.default, _CIA)
def _pad_enum(self: Tensor, pad: Sequence[int], mode: int, value: float | None = None) -> Tensor:
    """``pad`` by its mode's enum: ``constant_pad_nd`` or the ``{reflection,replication}_pad``
    op of the padded dims' count, or ``_pad_circular``."""
    if len(pad) % 2:
        raise RuntimeError("_pad_enum: Padding length must be divisible by 2")
    if len(pad) > 2 * self.ndim:
        raise RuntimeError(
            f"_pad_enum: Padding length should be less than or equal to two times the input "
            f"dimension but got padding length {len(pad)} and input of dimension {self.ndim}"
        )
    if mode == PAD_MODES["constant"]:
        return aten.constant_pad_nd.default(self, list(pad), 0.0 if value is None else value)
    name = next((k for k, v in PAD_MODES.items() if v == mode), str(mode))
    if value is not None and value != 0:
        raise RuntimeError(f'_pad_enum: Padding mode "{name}" doesn\'t take in value argument')
    n = len(pad) // 2
    if n in (1, 2, 3) and self.ndim in (n + 1, n + 2):
        if mode == PAD_MODES["reflect"]:
            return getattr(aten, f"reflection_pad{n}d").default(self, list(pad))
        if mode == PAD_MODES["replicate"]:
            return getattr(aten, f"replication_pad{n}d").default(self, list(pad))
        if mode == PAD_MODES["circular"]:
            return aten._pad_circular.default(self, list(pad))
    raise NotImplementedError(
        f"_pad_enum: Padding size {len(pad)} is not supported for {self.ndim}D input tensor in "
        f"mode {name!r}; non-constant padding pads the last 1, 2 or 3 dims of a 2D-3D, 3D-4D or "
        "4D-5D input"
    )


@impl(aten.pad.default, _CIA)
def pad(
    self: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    if mode not in PAD_MODES:
        raise NotImplementedError(
            f"pad: Unrecognised padding mode {mode}; use 'constant', 'reflect', 'replicate' or "
            "'circular'"
        )
    return _pad_enum(self, pad, PAD_MODES[mode], value)  # the function: PyTorch calls no op


# -------------------------------------------------------------------------------- resampling


def _register_upsample_vec(name: str, n: int, kind: str) -> None:
    op = getattr(aten, name).default

    def scales(scale_factors: Sequence[float] | None) -> list[float | None]:
        return [None if scale_factors is None else scale_factors[i] for i in range(n)]

    if kind in INTERPOLATING_KINDS:

        def vec_corners(
            input: Tensor,
            output_size: Sequence[int] | None,
            align_corners: bool,
            scale_factors: Sequence[float] | None,
        ) -> Tensor:
            size = upsample_output_size(input.shape, output_size, scale_factors, name)
            return op(input, size, align_corners, *scales(scale_factors))

        impl(getattr(aten, name).vec, _CIA, vec_corners)
    else:

        def vec(
            input: Tensor,
            output_size: Sequence[int] | None,
            scale_factors: Sequence[float] | None,
        ) -> Tensor:
            size = upsample_output_size(input.shape, output_size, scale_factors, name)
            return op(input, size, *scales(scale_factors))

        impl(getattr(aten, name).vec, _CIA, vec)


for _name, _n, _kind in UPSAMPLE:
    _register_upsample_vec(_name, _n, _kind)


@impl(aten.grid_sampler.default, _CIA)
def grid_sampler(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    if input.ndim == 4:
        return aten.grid_sampler_2d.default(
            input, grid, interpolation_mode, padding_mode, align_corners
        )
    if input.ndim == 5:
        return aten.grid_sampler_3d.default(
            input, grid, interpolation_mode, padding_mode, align_corners
        )
    raise RuntimeError(
        f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but "
        f"got grid with sizes {list(grid.shape)}; pass a 4-D or 5-D input"
    )


def _grid_axis(size: int, align_corners: bool, like: Tensor) -> Tensor:
    """The normalized coordinates of ``size`` points in [-1, 1] (pixel centres unless
    ``align_corners``): PyTorch's ``linspace_from_neg_one``."""
    if size <= 1:
        return aten.zeros.default([size], dtype=like.dtype, device=like.device)
    axis = aten.linspace.default(-1, 1, size, dtype=like.dtype, device=like.device)
    return axis if align_corners else aten.mul.Scalar(axis, (size - 1) / size)


def base_grid(size: Sequence[int], align_corners: bool, like: Tensor) -> Tensor:
    """``(prod(spatial), n + 1)``: each output point's homogeneous coordinates (x, y[, z], 1),
    x running along the last dim (PyTorch's ``make_base_grid``)."""
    spatial = list(size[2:])
    n = len(spatial)
    coords = []
    for i in range(n):  # x along the last spatial dim, then y, then z
        dim = n - 1 - i
        shape = [1] * n
        shape[dim] = spatial[dim]
        axis = aten.view.default(_grid_axis(spatial[dim], align_corners, like), shape)
        coords.append(aten.expand.default(axis, spatial))
    coords.append(aten.ones.default(spatial, dtype=like.dtype, device=like.device))
    return aten.view.default(aten.stack.default(coords, -1), [math.prod(spatial), n + 1])


@impl(aten.affine_grid_generator.default, DispatchKey.CompositeExplicitAutograd)
def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    """Each output point's homogeneous coordinates times ``theta^T``: ``(N, *spatial, n)``."""
    shape = affine_grid_shape(theta, size)
    base = base_grid(size, align_corners, theta)
    grid = aten.matmul.default(base, aten.transpose.int(theta, 1, 2))  # (N, P, n)
    return aten.view.default(grid, list(shape))


@impl(aten.affine_grid_generator_backward.default, _CIA)
def affine_grid_generator_backward(
    grad: Tensor, size: Sequence[int], align_corners: bool
) -> Tensor:
    """The gradient of ``theta``: ``grad^T @ base_grid`` per sample."""
    n = len(size) - 2
    base = base_grid(size, align_corners, grad)
    flat = aten.reshape.default(grad, [size[0], base.shape[0], n])
    return aten.matmul.default(aten.transpose.int(flat, 1, 2), base)  # (N, n, n + 1)
