"""Variable-length sequences: ``PackedSequence``, ``pack_padded_sequence``,
``pad_packed_sequence``, ``pad_sequence``, ``pack_sequence`` and their inverses, as PyTorch's.

# NOTE [packed layout]
A packed batch holds the sequences time step by time step, longest first: ``data`` stacks the
``batch_sizes[t]`` rows still running at step ``t`` (sequences sorted by decreasing length),
so a recurrent layer reads step ``t`` as ``data[offset_t : offset_t + batch_sizes[t]]``.
``sorted_indices`` is the permutation that sorted the batch (None when it came sorted) and
``unsorted_indices`` its inverse. Packing and unpacking are one gather each, through an index
computed from the lengths, so gradients flow through them like any indexing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

import ember
from ember._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of an index permutation (None for None).

    >>> ember.nn.utils.rnn.invert_permutation(ember.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    p = permutation.numpy()
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size, dtype=p.dtype)
    return ember.from_numpy(inv).to(permutation.device)


class PackedSequence(_PackedSequenceBase):
    """A batch of variable-length sequences packed time step by time step (NOTE [packed
    layout]); made by ``pack_padded_sequence`` or ``pack_sequence``.

    >>> p = ember.nn.utils.rnn.pack_sequence([ember.ones(3, 2), ember.ones(1, 2)])
    >>> p.batch_sizes
    tensor([2, 1, 1])
    """

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn."
                )
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        data, batch_sizes = data  # PackedSequence((data, batch_sizes))
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The same sequences with ``data`` moved or cast (``batch_sizes`` stays on the cpu)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        moved = [None if t is None else t.to(device) for t in (self.sorted_indices,
                                                               self.unsorted_indices)]  # fmt: skip
        return type(self)(data, self.batch_sizes, moved[0], moved[1])

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def double(self) -> PackedSequence:
        return self.to(dtype=ember.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=ember.float32)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def _lengths_list(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.reshape(-1).tolist()]
    return [int(v) for v in lengths]


def _pack_index(lengths: Sequence[int], steps: int, batch: int, batch_first: bool) -> np.ndarray:
    """Flat positions, in a ``(T, B)`` or ``(B, T)`` layout, of the packed rows (time-major,
    sorted by decreasing length)."""
    lens = np.asarray(lengths)
    t = np.arange(steps)[:, None]
    b = np.arange(batch)[None, :]
    keep = t < lens[None, :]  # (T, B)
    flat = b * steps + t if batch_first else t * batch + b
    return flat[keep]  # row-major over (t, b): time-major, then batch


def _batch_sizes(lengths: Sequence[int]) -> np.ndarray:
    lens = np.asarray(lengths)
    steps = int(lens.max()) if lens.size else 0
    return (lens[None, :] > np.arange(steps)[:, None]).sum(1).astype(np.int64)


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded ``(T, B, *)`` (or ``(B, T, *)``) batch of sequences of ``lengths``.

    >>> x = ember.arange(6.0).reshape(3, 2)
    >>> ember.nn.utils.rnn.pack_padded_sequence(x, [3, 2]).data
    tensor([0., 1., 2., 3., 4.])
    """
    lens = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-np.asarray(lens), kind="stable")
        lens = [lens[i] for i in order]
        sorted_indices = ember.from_numpy(order.astype(np.int64)).to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)  # noqa: A001
    if any(a < b for a, b in zip(lens, lens[1:], strict=False)):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability."
        )
    if lens and lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    steps = input.shape[1 if batch_first else 0]
    batch = input.shape[0 if batch_first else 1]
    if len(lens) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size="
            f"{batch})"
        )
    if lens and lens[0] > steps:
        raise RuntimeError(
            f"pack_padded_sequence: the longest length {lens[0]} exceeds the {steps} steps of the "
            "input"
        )
    index = _pack_index(lens, steps, batch, batch_first)
    flat = input.reshape(steps * batch, *input.shape[2:])
    data = flat.index_select(0, ember.from_numpy(index).to(input.device))
    batch_sizes = ember.from_numpy(_batch_sizes(lens))
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Unpack a ``PackedSequence`` into a padded batch and the lengths (in the original order).

    >>> p = ember.nn.utils.rnn.pack_sequence([ember.ones(2), ember.ones(1)])
    >>> ember.nn.utils.rnn.pad_packed_sequence(p, batch_first=True)
    (tensor([[1., 1.],
            [1., 0.]]), tensor([2, 1]))
    """
    sizes = sequence.batch_sizes.numpy().astype(np.int64)
    steps = sizes.size
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps = total_length
    batch = int(sizes[0]) if sizes.size else 0
    lens = (sizes[None, :] > np.arange(batch)[:, None]).sum(1)
    data = sequence.data
    rows = int(sizes.sum())
    # every padded position reads a data row, or the padding row appended after them
    gather = np.full((steps, batch) if not batch_first else (batch, steps), rows, np.int64)
    pos = _pack_index(lens.tolist(), steps, batch, batch_first)
    gather.reshape(-1)[pos] = np.arange(rows)
    pad_row = ember.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = ember.cat([data, pad_row]).index_select(
        0, ember.from_numpy(gather.reshape(-1)).to(data.device)
    )
    padded = padded.reshape(*gather.shape, *data.shape[1:])
    lengths = ember.from_numpy(lens.astype(np.int64))
    if sequence.unsorted_indices is not None:
        order = sequence.unsorted_indices
        padded = padded.index_select(0 if batch_first else 1, order)
        lengths = lengths[order.to("cpu")]
    return padded, lengths


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of different lengths into one padded ``(T, B, *)`` (or ``(B, T, *)``)
    tensor.

    >>> ember.nn.utils.rnn.pad_sequence([ember.ones(2), ember.ones(1)], batch_first=True)
    tensor([[1., 1.],
            [1., 0.]])
    """
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    elif not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}"
        )
    seqs = list(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if not seqs:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    trailing = tuple(seqs[0].shape[1:])
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(
                f"pad_sequence: every sequence must have the trailing shape {list(trailing)} of "
                f"the first, got {list(s.shape)}"
            )
        extra = longest - s.shape[0]
        pad = [0, 0] * len(trailing) + ([0, extra] if padding_side == "right" else [extra, 0])
        padded.append(ember.ops.aten.constant_pad_nd.default(s, pad, padding_value))
    return ember.stack(padded, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The list of sequences in a padded batch, each cut to its length.

    >>> x = ember.tensor([[1.0, 2.0], [3.0, 0.0]])
    >>> ember.nn.utils.rnn.unpad_sequence(x, ember.tensor([2, 1]), batch_first=True)
    [tensor([1., 2.]), tensor([3.])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(n)] for seq, n in zip(padded_sequences, _lengths_list(lengths), strict=True)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of variable-length sequences (each ``(L, *)``).

    >>> ember.nn.utils.rnn.pack_sequence([ember.ones(2), ember.ones(1)]).data
    tensor([1., 1., 1.])
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences in a ``PackedSequence`` (the inverse of ``pack_sequence``).

    >>> p = ember.nn.utils.rnn.pack_sequence([ember.ones(2), ember.ones(1)])
    >>> ember.nn.utils.rnn.unpack_sequence(p)
    [tensor([1., 1.]), tensor([1.])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
