"""Recurrent layers: ``RNN`` (tanh or relu), ``LSTM`` (with ``proj_size``), ``GRU``, and the
cells ``RNNCell``, ``LSTMCell``, ``GRUCell``, as PyTorch's: the same parameter names
(``weight_ih_l0``, ``bias_hh_l1_reverse``, ``weight_hr_l0``...), shapes, gate order and
initialization (``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``), so state_dicts load across
libraries; inputs ``(L, N, H_in)``, ``(N, L, H_in)`` with ``batch_first``, unbatched
``(L, H_in)``, or a ``PackedSequence`` (see NOTE [recurrent layers] in
``ember/ops/native/rnn.py``).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import ember
from ember._tensor import Tensor
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils.rnn import PackedSequence
from ember.ops.registry import ops

aten = ops.aten

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """The parameters, checks and hidden-state handling the recurrent layers share."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.dropout = float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        for name, value, kind in (
            ("bias", bias, bool), ("batch_first", batch_first, bool),
            ("input_size", input_size, int), ("hidden_size", hidden_size, int),
        ):  # fmt: skip
            if not isinstance(value, kind):
                raise TypeError(
                    f"{name} should be of type {kind.__name__}, got: {type(value).__name__}"
                )
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_input = input_size if layer == 0 else real_hidden * dirs
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]  # fmt: skip
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(ember.empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor]:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: ember keeps no fused weight buffer to compact (PyTorch's is for cuDNN)."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ------------------------------------------------------------------ checks
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        weight = self._flat_weights[0]
        if input.dtype is not weight.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                f"Convert input: input.to({weight.dtype}), or convert model: "
                f"model.to({input.dtype})"
            )
        want = 2 if batch_sizes is not None else 3
        if input.dim() != want:
            raise RuntimeError(f"input must have {want} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                f"{input.shape[-1]}"
            )

    def _mini_batch(self, input: Tensor, batch_sizes: Tensor | None) -> int:
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.shape[0] if self.batch_first else input.shape[1]

    def get_expected_hidden_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        dirs = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * dirs, self._mini_batch(input, batch_sizes), size)

    def check_hidden_size(
        self,
        hx: Tensor,
        expected: tuple[int, int, int],
        msg: str = "Expected hidden size {}, got {}",
    ) -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    # ------------------------------------------------------------------ forward
    def _prepare(
        self, input: Any, hx: Any, name: str
    ) -> tuple[Tensor, Any, Tensor | None, Tensor | None, Tensor | None, bool, int]:
        """Unpack a PackedSequence or add the batch dim of an unbatched input; checks hx's
        rank. Returns (input, hx, batch_sizes, sorted, unsorted, batched, batch_dim)."""
        batch_dim = 0 if self.batch_first else 1
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            hx = None if hx is None else self.permute_hidden(hx, sorted_indices)
            return data, hx, batch_sizes, sorted_indices, unsorted_indices, True, batch_dim
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead"
            )
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(batch_dim)  # noqa: A001
        if hx is not None:
            hxs = hx if isinstance(hx, tuple) else (hx,)
            want = 3 if batched else 2
            if any(h.dim() != want for h in hxs):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                dims = ", ".join(f"{h.dim()}-D" for h in hxs)
                raise RuntimeError(
                    f"For {kind} input, hx should also be {want}-D but got ({dims}) tensor"
                )
            if not batched:
                hx = tuple(h.unsqueeze(1) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(1)
        return input, hx, None, None, None, batched, batch_dim

    def _zeros(self, input: Tensor, batch: int, size: int) -> Tensor:
        dirs = 2 if self.bidirectional else 1
        return ember.zeros(
            (self.num_layers * dirs, batch, size), dtype=input.dtype, device=input.device
        )

    def _finish(
        self,
        output: Tensor,
        hidden: Any,
        batch_sizes: Tensor | None,
        sorted_indices: Tensor | None,
        unsorted_indices: Tensor | None,
        batched: bool,
        batch_dim: int,
    ) -> tuple[Any, Any]:
        if batch_sizes is not None:
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            output = output.squeeze(batch_dim)
            hidden = (
                tuple(h.squeeze(1) for h in hidden)
                if isinstance(hidden, tuple)
                else hidden.squeeze(1)
            )
        return output, self.permute_hidden(hidden, unsorted_indices)

    def _run(self, op: Any, input: Tensor, hx: Any, batch_sizes: Tensor | None) -> Any:
        args = (self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                self.bidirectional)  # fmt: skip
        if batch_sizes is None:
            return op.input(input, hx, *args, self.batch_first)
        return op.data(input, batch_sizes, hx, *args)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        name = {"GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}[self.mode]
        data, hx, sizes, srt, uns, batched, bdim = self._prepare(input, hx, name)
        if hx is None:
            hx = self._zeros(data, self._mini_batch(data, sizes), self.hidden_size)
        self.check_forward_args(data, hx, sizes)
        op = {"GRU": aten.gru, "RNN_TANH": aten.rnn_tanh, "RNN_RELU": aten.rnn_relu}[self.mode]
        output, hidden = self._run(op, data, hx, sizes)
        return self._finish(output, hidden, sizes, srt, uns, batched, bdim)  # type: ignore[return-value]


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    >>> rnn = ember.nn.RNN(4, 8, num_layers=2)
    >>> out, h = rnn(ember.ones(5, 3, 4)); out.shape, h.shape
    (ember.Size([5, 3, 8]), ember.Size([2, 3, 8]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit layers (PyTorch's gate order: reset, update, new).

    >>> gru = ember.nn.GRU(4, 8, batch_first=True, bidirectional=True)
    >>> out, h = gru(ember.ones(3, 5, 4)); out.shape, h.shape
    (ember.Size([3, 5, 16]), ember.Size([2, 3, 8]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory layers (gate order: input, forget, cell, output), with an
    optional projection of the hidden state (``proj_size``).

    >>> lstm = ember.nn.LSTM(4, 8, num_layers=2)
    >>> out, (h, c) = lstm(ember.ones(5, 3, 4)); out.shape, h.shape, c.shape
    (ember.Size([5, 3, 8]), ember.Size([2, 3, 8]), ember.Size([2, 3, 8]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        dirs = 2 if self.bidirectional else 1
        return (self.num_layers * dirs, self._mini_batch(input, batch_sizes), self.hidden_size)

    def check_forward_args(  # type: ignore[override]
        self, input: Tensor, hidden: tuple[Tensor, Tensor], batch_sizes: Tensor | None
    ) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(  # type: ignore[override]
        self, input: Any, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Any, tuple[Tensor, Tensor]]:
        data, hx, sizes, srt, uns, batched, bdim = self._prepare(input, hx, "LSTM")
        if hx is None:
            batch = self._mini_batch(data, sizes)
            real = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zeros(data, batch, real), self._zeros(data, batch, self.hidden_size))
        self.check_forward_args(data, hx, sizes)
        output, h, c = self._run(aten.lstm, data, list(hx), sizes)
        return self._finish(output, (h, c), sizes, srt, uns, batched, bdim)  # type: ignore[return-value]


# --------------------------------------------------------------------------- cells


class RNNCellBase(Module):
    """The parameters the cells share: ``weight_ih``, ``weight_hh``, ``bias_ih``,
    ``bias_hh``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(ember.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(ember.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input: Tensor, hx: Any, name: str, pair: bool) -> tuple[Tensor, Any, bool]:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for i, h in enumerate(hx if pair else (hx,)):
                if h.dim() not in (1, 2):
                    what = f"hx[{i}]" if pair else "hidden"
                    raise ValueError(
                        f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead"
                    )
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)  # noqa: A001
        if hx is None:
            zeros = ember.zeros(
                (input.shape[0], self.hidden_size), dtype=input.dtype, device=input.device
            )
            hx = (zeros, zeros) if pair else zeros
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if pair else hx.unsqueeze(0)
        return input, hx, batched


class RNNCell(RNNCellBase):
    """One Elman RNN step.

    >>> ember.nn.RNNCell(4, 8)(ember.ones(3, 4)).shape
    ember.Size([3, 8])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, hx, batched = self._batched(input, hx, "RNNCell", pair=False)
        if self.nonlinearity == "tanh":
            cell = aten.rnn_tanh_cell.default
        elif self.nonlinearity == "relu":
            cell = aten.rnn_relu_cell.default
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        out = cell(x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h, c)``.

    >>> h, c = ember.nn.LSTMCell(4, 8)(ember.ones(3, 4)); h.shape
    ember.Size([3, 8])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        x, hx, batched = self._batched(input, hx, "LSTMCell", pair=True)
        h, c = aten.lstm_cell.default(
            x, list(hx), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh
        )
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step.

    >>> ember.nn.GRUCell(4, 8)(ember.ones(3, 4)).shape
    ember.Size([3, 8])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, hx, batched = self._batched(input, hx, "GRUCell", pair=False)
        out = aten.gru_cell.default(
            x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh
        )
        return out if batched else out.squeeze(0)
