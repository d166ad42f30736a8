"""ember.utils.data: datasets, samplers, DataLoader batching and shuffling, default_collate."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import ember
from ember.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)
from tests.conftest import requires_torch, torch


def _dataset(n: int = 10) -> TensorDataset:
    return TensorDataset(ember.arange(n * 2, dtype=ember.float32).reshape(n, 2), ember.arange(n))


def _order(loader: DataLoader) -> list[int]:
    return [i for _, y in loader for i in y.tolist()]


def test_tensor_dataset() -> None:
    ds = _dataset(4)
    assert len(ds) == 4
    x, y = ds[2]
    assert x.tolist() == [4.0, 5.0] and y.item() == 2
    with pytest.raises(AssertionError, match="Size mismatch"):
        TensorDataset(ember.zeros(3), ember.zeros(4))


@requires_torch
@pytest.mark.parametrize(
    ("n", "batch_size", "drop_last"),
    [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (0, 2, False)],
)
def test_batches_and_len_match_torch(n: int, batch_size: int, drop_last: bool) -> None:
    mine = DataLoader(_dataset(n), batch_size=batch_size, drop_last=drop_last)
    data_t = torch.utils.data.TensorDataset(
        torch.arange(n * 2, dtype=torch.float32).reshape(n, 2), torch.arange(n)
    )
    theirs = torch.utils.data.DataLoader(data_t, batch_size=batch_size, drop_last=drop_last)
    assert len(mine) == len(theirs)
    got = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in mine]
    want = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in theirs]
    assert got == want
    for (x, y), (xt, yt) in zip(mine, theirs, strict=True):
        assert isinstance(x, ember.Tensor) and x.dtype.name == str(xt.dtype).removeprefix("torch.")
        assert y.dtype.name == str(yt.dtype).removeprefix("torch.")


def test_shuffle_is_a_permutation_each_epoch_and_reproducible_with_a_seed() -> None:
    def loader(seed: int) -> DataLoader:
        return DataLoader(
            _dataset(20), batch_size=4, shuffle=True, generator=ember.Generator().manual_seed(seed)
        )

    a, b = loader(0), loader(0)
    epochs_a = [_order(a) for _ in range(3)]
    epochs_b = [_order(b) for _ in range(3)]
    assert epochs_a == epochs_b  # same seed, same sequence of epochs
    assert all(sorted(e) == list(range(20)) for e in epochs_a)
    assert epochs_a[0] != epochs_a[1]  # a new order each epoch
    assert epochs_a[0] != list(range(20))
    assert _order(loader(1)) != epochs_a[0]


def test_shuffle_without_generator_follows_manual_seed() -> None:
    ember.manual_seed(123)
    first = _order(DataLoader(_dataset(16), batch_size=5, shuffle=True))
    ember.manual_seed(123)
    assert _order(DataLoader(_dataset(16), batch_size=5, shuffle=True)) == first
    assert sorted(first) == list(range(16))


def test_batch_size_none_yields_single_samples() -> None:
    out = list(DataLoader(_dataset(3), batch_size=None))
    assert len(out) == 3 and [y.item() for _, y in out] == [0, 1, 2]


@requires_torch
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_batches_as_torch(drop_last: bool) -> None:
    """Full batches, a short last one or none, over lengths around the batch size, and a
    sampler that is a one-shot iterator (pulled exactly as far as the batches need)."""
    for n in (0, 1, 5, 31, 32, 33, 64, 65):
        want = list(torch.utils.data.BatchSampler(range(n), 32, drop_last))
        assert list(BatchSampler(range(n), 32, drop_last)) == want, n
    it = iter(range(10))
    first = next(iter(BatchSampler(it, 4, drop_last)))
    assert first == [0, 1, 2, 3] and next(it) == 4


@requires_torch
def test_stack_and_chain_datasets_as_torch() -> None:
    def build(lib: Any) -> Any:
        data = lib.utils.data
        a, b = data.TensorDataset(lib.arange(3)), data.TensorDataset(lib.arange(3) * 2)

        class Count(data.IterableDataset):
            def __iter__(self) -> Any:
                return iter(range(2))

            def __len__(self) -> int:
                return 2

        return (
            [data.StackDataset(a, b)[i] for i in range(3)],
            data.StackDataset(x=a, y=b).__getitems__([0, 2]),
            len(data.StackDataset(x=a)),
            list(Count() + Count()),
            len(data.ChainDataset([Count(), Count()])),
        )

    ours, theirs = build(ember), build(torch)
    assert repr(ours).replace("ember", "x") == repr(theirs).replace("torch", "x")
    data = ember.utils.data
    a = data.TensorDataset(ember.arange(3))
    for bad in ((a, data.TensorDataset(ember.arange(2))), ()):
        with pytest.raises(ValueError):
            data.StackDataset(*bad)
    with pytest.raises(ValueError, match="not both"):
        data.StackDataset(a, x=a)
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(data.ChainDataset([a]))


def test_samplers() -> None:
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    rs = RandomSampler(range(6), generator=ember.Generator().manual_seed(0))
    assert sorted(rs) == list(range(6)) and len(rs) == 6
    assert list(BatchSampler(range(7), 3, drop_last=False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(BatchSampler(range(7), 3, drop_last=True)) == 2
    with pytest.raises(ValueError, match="positive integer"):
        BatchSampler(range(3), 0, drop_last=False)
    custom = DataLoader(_dataset(6), batch_sampler=[[5, 0], [1]])
    assert [y.tolist() for _, y in custom] == [[5, 0], [1]] and len(custom) == 2
    ordered = DataLoader(_dataset(4), sampler=[3, 2, 1, 0], batch_size=2)
    assert [y.tolist() for _, y in ordered] == [[3, 2], [1, 0]]


def test_option_conflicts_raise_like_torch() -> None:
    ds = _dataset(4)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)


def test_default_collate_structures() -> None:
    Point = namedtuple("Point", ["x", "y"])
    batch = [
        {"img": np.ones(2, np.float32), "label": 1, "w": 0.5, "name": "a", "p": Point(1, 2.0)},
        {"img": np.zeros(2, np.float32), "label": 2, "w": 1.5, "name": "b", "p": Point(3, 4.0)},
    ]
    out = default_collate(batch)
    assert out["img"].tolist() == [[1.0, 1.0], [0.0, 0.0]] and out["img"].dtype == ember.float32
    assert out["label"].dtype == ember.int64 and out["label"].tolist() == [1, 2]
    assert out["w"].dtype == ember.float64 and out["name"] == ["a", "b"]
    assert type(out["p"]) is Point and out["p"].x.tolist() == [1, 3]
    pairs = default_collate([(ember.zeros(2), True), (ember.ones(2), False)])
    assert isinstance(pairs, list) and pairs[1].dtype == ember.bool
    lists = default_collate([[1, 2], [3, 4]])
    assert [t.tolist() for t in lists] == [[1, 3], [2, 4]]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate"):
        default_collate([object(), object()])


@requires_torch
def test_default_collate_matches_torch_shapes_and_dtypes() -> None:
    samples = [(np.arange(3.0), 7, 1.5), (np.arange(3.0) + 1, 8, 2.5)]
    mine = default_collate(samples)
    theirs = torch.utils.data.default_collate(samples)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        assert a.tolist() == b.tolist() and a.dtype.name == str(b.dtype).removeprefix("torch.")


def test_map_style_dataset_subclass_and_iterable_dataset() -> None:
    class Squares(Dataset):
        def __len__(self) -> int:
            return 5

        def __getitem__(self, i: int) -> dict:
            return {"x": float(i), "y": i * i}

    batches = list(DataLoader(Squares(), batch_size=2))
    assert [b["y"].tolist() for b in batches] == [[0, 1], [4, 9], [16]]

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    stream = DataLoader(Stream(), batch_size=3)
    assert [b.tolist() for b in stream] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5],
    ]  # fmt: skip
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(Stream(), shuffle=True)


def test_random_split_and_subset() -> None:
    g = ember.Generator().manual_seed(0)
    a, b = random_split(range(10), [7, 3], generator=g)
    assert len(a) == 7 and len(b) == 3
    assert sorted(list(a) + list(b)) == list(range(10))
    x, y, z = random_split(range(10), [0.5, 0.3, 0.2], generator=ember.Generator().manual_seed(1))
    assert (len(x), len(y), len(z)) == (5, 3, 2)
    again = random_split(range(10), [7, 3], generator=ember.Generator().manual_seed(0))
    assert list(again[0]) == list(a)
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [5, 6])
    sub = Subset(_dataset(5), [4, 0])
    assert len(sub) == 2 and sub[0][1].item() == 4
    joined = Subset(range(3), [0]) + Subset(range(3), [2])
    assert len(joined) == 2 and joined[1] == 2
