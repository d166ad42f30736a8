"""Activations (``ReLU``, ``GELU``, ``SiLU``, ``Tanh``, ``Sigmoid``, ``Softmax``, ``LeakyReLU``,
``ELU``, ``PReLU``, ...) and ``MultiheadAttention``."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn._functional_attention import query_is_batched
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter


class _Activation(Module):
    """An activation layer over a functional: ``forward`` is ``_fn(input, *options)``, the
    options the attributes named in ``_options`` (with ``_fn_kwargs`` added), and the repr
    shows those in ``_shown`` (all of them unless a layer says otherwise) as ``name=value``,
    ``inplace`` only when set."""

    _fn: ClassVar[Callable[..., Tensor]]
    _options: ClassVar[tuple[str, ...]] = ()
    _shown: ClassVar[tuple[str, ...] | None] = None
    _fn_kwargs: ClassVar[dict[str, Any]] = {}

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, *[getattr(self, name) for name in self._options], **self._fn_kwargs)

    def extra_repr(self) -> str:
        shown = self._options if self._shown is None else self._shown
        parts = [f"{name}={getattr(self, name)}" for name in shown if name != "inplace"]
        if "inplace" in shown and self.inplace:
            parts.append("inplace=True")
        return ", ".join(parts)


class ReLU(_Activation):
    """``max(x, 0)``.

    >>> ember.nn.ReLU()(ember.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    _fn = staticmethod(F.relu)
    _options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class GELU(Module):
    """Gaussian error linear unit.

    >>> ember.nn.GELU()(ember.tensor([0.0]))
    tensor([0.])
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(_Activation):
    """``x * sigmoid(x)``.

    >>> ember.nn.SiLU()(ember.tensor([0.0]))
    tensor([0.])
    """

    _fn = staticmethod(F.silu)
    _options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Tanh(Module):
    """Hyperbolic tangent.

    >>> ember.nn.Tanh()(ember.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class Sigmoid(Module):
    """Logistic sigmoid.

    >>> ember.nn.Sigmoid()(ember.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()


class Softmax(_Activation):
    """Softmax along ``dim``.

    >>> ember.nn.Softmax(dim=0)(ember.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """

    _fn = staticmethod(F.softmax)
    _options = ("dim",)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim


def _inplace(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class LeakyReLU(_Activation):
    """``x`` where ``x > 0``, else ``negative_slope * x``.

    >>> ember.nn.LeakyReLU(0.1)(ember.tensor([-2.0, 3.0]))
    tensor([-0.2000,  3.0000])
    """

    _fn = staticmethod(F.leaky_relu)
    _options = ("negative_slope", "inplace")

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace


class ELU(_Activation):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    >>> ember.nn.ELU()(ember.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """

    _fn = staticmethod(F.elu)
    _options = ("alpha", "inplace")

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace


class CELU(_Activation):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> ember.nn.CELU()(ember.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """

    _fn = staticmethod(F.celu)
    _options = ("alpha", "inplace")

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace


class SELU(_Activation):
    """Scaled ELU with the self-normalizing constants.

    >>> ember.nn.SELU()(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """

    _fn = staticmethod(F.selu)
    _options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Softplus(_Activation):
    """``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``).

    >>> ember.nn.Softplus()(ember.tensor([0.0]))
    tensor([0.6931])
    """

    _fn = staticmethod(F.softplus)
    _options = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold


class Hardtanh(_Activation):
    """``x`` clamped to ``[min_val, max_val]``.

    >>> ember.nn.Hardtanh()(ember.tensor([-3.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """

    _fn = staticmethod(F.hardtanh)
    _options = ("min_val", "max_val", "inplace")

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn(
                "keyword argument `min_value` is deprecated and rename to `min_val`",
                FutureWarning,
                stacklevel=2,
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and rename to `max_val`",
                FutureWarning,
                stacklevel=2,
            )
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if not self.max_val > self.min_val:
            raise AssertionError(
                f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})"
            )


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``.

    >>> ember.nn.ReLU6()(ember.tensor([-1.0, 9.0]))
    tensor([0., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardswish(_Activation):
    """``x * relu6(x + 3) / 6``.

    >>> ember.nn.Hardswish()(ember.tensor([4.0]))
    tensor([4.])
    """

    _fn = staticmethod(F.hardswish)
    _options = ("inplace",)
    _shown = ()  # PyTorch prints no options

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardsigmoid(_Activation):
    """``relu6(x + 3) / 6``.

    >>> ember.nn.Hardsigmoid()(ember.tensor([0.0]))
    tensor([0.5000])
    """

    _fn = staticmethod(F.hardsigmoid)
    _options = ("inplace",)
    _shown = ()  # PyTorch prints no options

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Mish(_Activation):
    """``x * tanh(softplus(x))``.

    >>> ember.nn.Mish()(ember.tensor([0.0]))
    tensor([0.])
    """

    _fn = staticmethod(F.mish)
    _options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class LogSigmoid(_Activation):
    """``log(sigmoid(x))``.

    >>> ember.nn.LogSigmoid()(ember.tensor([0.0]))
    tensor([-0.6931])
    """

    _fn = staticmethod(F.logsigmoid)


class LogSoftmax(_Activation):
    """``log(softmax(x, dim))``.

    >>> ember.nn.LogSoftmax(dim=0)(ember.tensor([0.0, 0.0]))
    tensor([-0.6931, -0.6931])
    """

    _fn = staticmethod(F.log_softmax)
    _options = ("dim",)
    _fn_kwargs = {"_stacklevel": 5}  # (the warning names the caller of the layer)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim


class Softmin(_Activation):
    """``softmax(-x, dim)``.

    >>> ember.nn.Softmin(dim=0)(ember.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """

    _fn = staticmethod(F.softmin)
    _options = ("dim",)
    _fn_kwargs = {"_stacklevel": 5}  # (the warning names the caller of the layer)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim


class Softsign(_Activation):
    """``x / (1 + |x|)``.

    >>> ember.nn.Softsign()(ember.tensor([1.0]))
    tensor([0.5000])
    """

    _fn = staticmethod(F.softsign)


class Tanhshrink(_Activation):
    """``x - tanh(x)``.

    >>> ember.nn.Tanhshrink()(ember.tensor([0.0]))
    tensor([0.])
    """

    _fn = staticmethod(F.tanhshrink)


class Softshrink(_Activation):
    """Shrinks ``x`` toward 0 by ``lambd`` (0 inside ``[-lambd, lambd]``).

    >>> ember.nn.Softshrink()(ember.tensor([1.0]))
    tensor([0.5000])
    """

    _fn = staticmethod(F.softshrink)
    _options = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(_Activation):
    """``x`` where ``|x| > lambd``, else 0.

    >>> ember.nn.Hardshrink()(ember.tensor([1.0, 0.2]))
    tensor([1., 0.])
    """

    _fn = staticmethod(F.hardshrink)
    _options = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Threshold(_Activation):
    """``x`` where ``x > threshold``, else ``value``.

    >>> ember.nn.Threshold(2.0, -1.0)(ember.tensor([1.0, 3.0]))
    tensor([-1.,  3.])
    """

    _fn = staticmethod(F.threshold)
    _options = ("threshold", "value", "inplace")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace


class GLU(_Activation):
    """Gated linear unit over the two halves of ``dim``.

    >>> ember.nn.GLU()(ember.tensor([1.0, 0.0]))
    tensor([0.5000])
    """

    _fn = staticmethod(F.glu)
    _options = ("dim",)

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim


class PReLU(Module):
    """Leaky ReLU with a learned slope: one, or one per channel (dim 1).

    >>> ember.nn.PReLU()(ember.tensor([-4.0, 2.0]))
    tensor([-1.,  2.], grad_fn=<PreluKernelBackward0>)
    """

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(ember.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under the name PyTorch gives ``MultiheadAttention.out_proj``."""


class MultiheadAttention(Module):
    """Multi-head attention (``batch_first`` for ``(N, L, E)`` inputs); returns the output and
    the attention weights (averaged over heads unless told otherwise).

    >>> mha = ember.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> mha(ember.ones(1, 3, 8), ember.ones(1, 3, 8), ember.ones(1, 3, 8))[0].shape
    ember.Size([1, 3, 8])
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(ember.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(ember.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(ember.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(ember.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ember.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(ember.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(ember.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        batched = query_is_batched(query)
        if self.batch_first and batched:  # transposed, keeping which of them are one tensor
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights


class RReLU(Module):
    """Leaky ReLU with a random negative slope from ``U(lower, upper)`` while training, and
    their mean in eval (``F.rrelu``).

    >>> ember.nn.RReLU(0.1, 0.3).eval()(ember.tensor([-1.0, 2.0]))
    tensor([-0.2000,  2.0000])
    """

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:  # noqa: E501
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"
