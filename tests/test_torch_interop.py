"""``ember.utils.torch_interop`` (tensors, state_dicts, modules' parameters both ways, memory
shared) and ``ember.load(mmap=True)`` on PyTorch's checkpoints, against PyTorch."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.utils import torch_interop

torch = pytest.importorskip("torch", reason="the interop's other side is PyTorch")


def _pair() -> tuple[object, object]:
    def build(m: object) -> object:
        nn = m.nn  # type: ignore[attr-defined]
        return nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(12, 4))

    return build(torch), build(ember)


def test_modules_both_ways() -> None:
    tm, em = _pair()
    tm(torch.randn(5, 2, 4, 4))  # running statistics move
    torch_interop.load_from_torch(em, tm)
    tm.eval(), em.eval()  # type: ignore[attr-defined]
    x = np.random.default_rng(0).standard_normal((2, 2, 4, 4)).astype(np.float32)
    want = tm(torch.from_numpy(x)).detach().numpy()  # type: ignore[operator]
    got = em(ember.from_numpy(x)).detach().numpy()  # type: ignore[operator]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # and back: an ember-initialised model's weights into a fresh torch one
    tm2, em2 = _pair()
    torch_interop.load_into_torch(tm2, em2)
    for (tn, tp), (en, ep) in zip(
        tm2.state_dict().items(),  # type: ignore[attr-defined]
        em2.state_dict().items(),  # type: ignore[attr-defined]
        strict=True,
    ):
        assert tn == en
        np.testing.assert_array_equal(tp.numpy(), ep.numpy())
    with pytest.raises(RuntimeError):  # load_state_dict's strict check names the keys
        torch_interop.load_from_torch(ember.nn.Linear(2, 2), torch.nn.Linear(3, 2))


def test_tensors_share_memory() -> None:
    e = ember.arange(6.0).reshape(2, 3)
    t = torch_interop.to_torch(e)
    t[0, 0] = 42.0
    assert e[0, 0].item() == 42.0
    src = torch.zeros(4, dtype=torch.float64)
    back = torch_interop.from_torch(src)
    back.add_(3)
    assert src.tolist() == [3.0] * 4 and back.dtype == ember.float64
    assert torch_interop.to_torch(ember.nn.Parameter(ember.ones(2))).requires_grad
    sd = torch_interop.state_dict_to_torch({"w": e, "step": 3})
    assert sd["step"] == 3 and sd["w"].data_ptr() == t.data_ptr()
    with pytest.raises(TypeError, match="expected an ember.Tensor"):
        torch_interop.to_torch(np.ones(2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a torch.Tensor"):
        torch_interop.from_torch(e)


def _mapped(a: np.ndarray) -> bool:
    while a is not None:
        if isinstance(a, np.memmap):
            return True
        a = a.base  # type: ignore[assignment]
    return False


def test_load_mmap(tmp_path: Path) -> None:
    path = tmp_path / "m.pt"
    lin = torch.nn.Linear(5, 3)
    sd = lin.state_dict()
    torch.save({"sd": sd, "tied": sd["weight"][1], "step": 7}, path)
    got = ember.load(path, mmap=True)
    w = got["sd"]["weight"]
    assert _mapped(w.numpy())
    np.testing.assert_array_equal(w.numpy(), sd["weight"].numpy())
    assert got["step"] == 7
    w.add_(1.0)  # copy-on-write: the views see it, the file does not change
    np.testing.assert_array_equal(got["tied"].numpy(), sd["weight"][1].numpy() + 1)
    np.testing.assert_array_equal(ember.load(path)["sd"]["weight"].numpy(), sd["weight"].numpy())
    with pytest.raises(ValueError, match="file path"):
        ember.load(io.BytesIO(path.read_bytes()), mmap=True)
    assert not _mapped(ember.load(path)["sd"]["bias"].numpy())
