"""Interop with PyTorch itself: its checkpoint files both ways (NOTE [torch checkpoint
format]), safetensors files both ways, and zero-copy exchange through DLPack."""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ember
from ember.serialization import _save_ember_format

from .conftest import requires_torch, torch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
          "float64", "complex64", "complex128"]  # fmt: skip


def _values(name: str, n: int = 6) -> np.ndarray:
    rng = np.random.default_rng(len(name))
    if name == "bool":
        return rng.random(n) > 0.5
    if name.startswith("complex"):
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(name)
    return (rng.standard_normal(n) * 50).astype(name)


def _same(e: Any, t: Any) -> None:
    """An ember object equals a PyTorch one: tensors by dtype, shape, strides and values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), type(e)
        assert e.dtype.name == str(t.dtype).removeprefix("torch.")
        assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
        assert e.requires_grad == t.requires_grad
        assert isinstance(e, ember.nn.Parameter) == isinstance(t, torch.nn.Parameter)
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    elif isinstance(t, dict):
        assert type(e).__name__ == type(t).__name__ and list(e) == list(t)
        for k in t:
            _same(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert len(e) == len(t)
        for a, b in zip(e, t, strict=True):
            _same(a, b)
    elif isinstance(t, torch.dtype):
        assert e is getattr(ember, str(t).removeprefix("torch."))
    else:
        assert e == t, (e, t)


def _checkpoint(lib: Any) -> tuple[Any, Any, dict[str, Any]]:
    """What both directions save, made with ``lib`` (ember or torch): a Linear and
    BatchNorm1d model trained one Adam step, a (3, 4) base tensor for views, and a dict of
    the model's and the optimizer's state_dicts and a tensor of every dtype."""
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
    opt = lib.optim.Adam(model.parameters())
    model(lib.randn(5, 3)).sum().backward()
    opt.step()
    base = lib.arange(12.0).view(3, 4)
    obj = {
        "model": model.state_dict(),
        "opt": opt.state_dict(),
        "dtypes": {d: lib.from_numpy(_values(d)) for d in DTYPES},
    }
    return model, base, obj


@requires_torch
def test_torch_checkpoint_loads_in_ember(tmp_path: Path) -> None:
    """Every dtype, views and non-contiguous tensors, parameters, nested containers, a
    state_dict with its metadata and an optimizer's state, from torch.save."""
    model, base, obj = _checkpoint(torch)
    obj |= {
        "views": [base, base.t(), base[1:, ::2], base[2]],
        "param": torch.nn.Parameter(torch.ones(2)),
        "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False),
        "grad": torch.ones(3).requires_grad_(),
        "misc": (1, 2.5, "s", None, True, b"bytes", torch.float16, torch.Size([2, 3])),
    }
    torch.save(obj, tmp_path / "t.pt")
    loaded = ember.load(tmp_path / "t.pt")
    _same(loaded, obj)
    assert loaded["model"]._metadata == obj["model"]._metadata
    assert isinstance(loaded["misc"][-1], ember.Size)
    # tensors that shared a storage share memory again
    loaded["views"][0][2, 0] = -1.0
    assert loaded["views"][1][0, 2].item() == -1.0 and loaded["views"][3][0].item() == -1.0


@requires_torch
def test_ember_checkpoint_loads_in_torch_with_weights_only(tmp_path: Path) -> None:
    model, base, obj = _checkpoint(ember)
    obj |= {
        "views": [base, base.t(), base[1:, ::2]],
        "tied": [base, base],
        "param": ember.nn.Parameter(ember.ones(2)),
        "misc": (1, 2.5, "s", None, True, b"bytes", ember.float16, ember.Size([2, 3])),
    }
    path = tmp_path / "e.pt"
    ember.save(obj, path)
    with zipfile.ZipFile(path) as zf:
        assert "e/data.pkl" in zf.namelist() and zf.read("e/version") == b"3\n"
        data = [i for i in zf.infolist() if "/data/" in i.filename]
        # base once (its views and the tied pair share it), each dtype's, the model's 7
        # (BatchNorm's buffers too), Adam's 3 per parameter, the Parameter's
        assert len(data) == 1 + len(DTYPES) + 7 + 3 * 4 + 1
    t = torch.load(path, weights_only=True)
    _same(model.state_dict(), t["model"])
    _same(ember.load(path), t)  # and back
    assert t["model"]._metadata == model.state_dict()._metadata
    t["views"][0][2, 0] = -1.0  # one storage in the file, so one in torch too
    assert t["views"][1][0, 2].item() == -1.0 and t["tied"][0] is t["tied"][1]
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    net.load_state_dict(t["model"])
    topt = torch.optim.Adam(net.parameters())
    topt.load_state_dict(t["opt"])
    assert topt.state_dict()["state"][0]["step"].item() == 1.0


def _zip_with_pickle(payload: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/version", b"3\n")
    return buf.getvalue()


class _RunsCommand:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.marker}",))


def test_crafted_pickles_are_refused_without_running(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    crafted = [
        pickle.dumps(_RunsCommand(str(marker)), protocol=2),
        pickle.dumps({"a": eval}, protocol=2),  # a global outside the allow list
        b"\x80\x02ccollections\nOrderedDict\n)R}X\x01\x00\x00\x00xK\x01sb.",  # BUILD of 'x'
        b"\x80\x02ctorch\nFloatStorage\n)R.",  # calling a storage class
    ]
    names = [f"{os.system.__module__}.system", "eval",
             "sets the state", "calls torch.FloatStorage"]  # fmt: skip
    for payload, name in zip(crafted, names, strict=True):
        with pytest.raises(RuntimeError, match=name.replace(".", r"\.")):
            ember.load(io.BytesIO(_zip_with_pickle(payload)))
    assert not marker.exists()


def _rewritten(archive: bytes, edit: Any) -> io.BytesIO:
    """The archive with its data.pkl replaced by ``edit(data.pkl)`` (a valid zip)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            payload = src.read(info)
            dst.writestr(
                info.filename, edit(payload) if info.filename.endswith(".pkl") else payload
            )
    out.seek(0)
    return out


def test_truncated_and_corrupted_files_raise_clearly(tmp_path: Path) -> None:
    path = tmp_path / "w.pt"
    ember.save({"w": ember.arange(1000.0)}, path)
    whole = path.read_bytes()
    with pytest.raises(RuntimeError, match="truncated or corrupted"):
        ember.load(io.BytesIO(whole[: len(whole) // 2]))
    flipped = bytearray(whole)
    flipped[whole.index(b"\x80\x02") + 5] ^= 0xFF  # a byte of data.pkl: its CRC fails
    with pytest.raises(RuntimeError, match="corrupted"):
        ember.load(io.BytesIO(bytes(flipped)))
    # a storage record shorter than its pickle says (numel 1000 -> 1024)
    longer = _rewritten(whole, lambda p: p.replace(b"M\xe8\x03", b"M\x00\x04"))
    with pytest.raises(RuntimeError, match="holds 4000 bytes, the storage needs 4096"):
        ember.load(longer)
    with pytest.raises(RuntimeError, match="legacy"):
        ember.load(io.BytesIO(b"\x80\x02not a zip at all"))


def test_a_tensor_must_lie_inside_its_storage() -> None:
    """A crafted size or stride reaching past the storage is refused (no stray memory)."""
    buf = io.BytesIO()
    ember.save(ember.arange(4.0), buf)
    past = _rewritten(buf.getvalue(), lambda p: p.replace(b"K\x04\x85", b"K\x09\x85"))
    with pytest.raises(RuntimeError, match="reaches element 8 of a storage of 4"):
        ember.load(past)


def test_map_location_meta_and_the_earlier_format(tmp_path: Path) -> None:
    x = ember.arange(6.0).view(2, 3).t()
    path = tmp_path / "x.pt"
    ember.save({"x": x}, path)
    meta = ember.load(path, map_location="meta")["x"]
    assert meta.device.type == "meta" and meta.shape == x.shape and meta.stride() == (1, 3)
    assert ember.load(path, map_location={"cpu": "cpu"})["x"].tolist() == x.tolist()
    with pytest.raises(TypeError, match="callable map_location"):
        ember.load(path, map_location=lambda s, loc: s)
    _save_ember_format({"x": x, "n": 3}, tmp_path / "old.ember")
    old = ember.load(tmp_path / "old.ember")
    assert old["n"] == 3 and old["x"].tolist() == x.tolist()


@requires_torch
def test_safetensors_both_ways(tmp_path: Path) -> None:
    st = pytest.importorskip("safetensors.torch", reason="the safetensors extra is absent")
    t_state = {"w": torch.randn(3, 4), "i": torch.arange(5), "h": torch.ones(2).half()}
    st.save_file(t_state, tmp_path / "t.safetensors")
    e_state = ember.load(tmp_path / "t.safetensors")
    for k, v in t_state.items():
        np.testing.assert_array_equal(e_state[k].numpy(), v.numpy())
    e_state["w"].add_(1)  # writable memory
    ember.save(e_state, tmp_path / "e.safetensors")
    back = st.load_file(tmp_path / "e.safetensors")
    np.testing.assert_array_equal(back["w"].numpy(), t_state["w"].numpy() + 1)
    model = ember.nn.Linear(4, 3)
    model.load_state_dict({"weight": e_state["w"], "bias": ember.zeros(3)})
    if _has_ml_dtypes():
        bf = {"b": torch.arange(4.0).bfloat16()}
        st.save_file(bf, tmp_path / "bf.safetensors")
        e_bf = ember.load(tmp_path / "bf.safetensors")["b"]
        assert e_bf.dtype.name == "bfloat16" and e_bf.float().tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="share memory"):
        w = ember.ones(4)
        ember.save({"a": w, "b": w[1:]}, tmp_path / "tied.safetensors")


def _has_ml_dtypes() -> bool:
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        return False
    return True


@requires_torch
def test_dlpack_shares_memory_both_ways() -> None:
    a = ember.arange(4.0)
    t = torch.from_dlpack(a)
    t.add_(10)
    assert a.tolist() == [10.0, 11.0, 12.0, 13.0]
    tt = torch.arange(3, dtype=torch.int32)
    e = ember.from_dlpack(tt)
    e.mul_(2)
    assert tt.tolist() == [0, 2, 4] and e.dtype is ember.int32
    assert a.__dlpack_device__() == (1, 0)
    with pytest.raises(RuntimeError, match="requires grad"):
        a.requires_grad_().__dlpack__()
    with pytest.raises(RuntimeError, match="meta tensor has no memory"):
        ember.empty(2, device="meta").__dlpack__()


@requires_torch
def test_bfloat16_checkpoints_both_ways(tmp_path: Path) -> None:
    if not _has_ml_dtypes():
        pytest.skip("ember.bfloat16 needs the optional ml_dtypes package")
    x = ember.tensor([1.5, -2.0, 3.0], dtype=ember.bfloat16)
    ember.save(x, tmp_path / "e.pt")
    t = torch.load(tmp_path / "e.pt", weights_only=True)
    assert t.dtype == torch.bfloat16 and t.tolist() == [1.5, -2.0, 3.0]
    torch.save(t * 2, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    assert back.dtype is ember.bfloat16 and back.tolist() == [3.0, -4.0, 6.0]
