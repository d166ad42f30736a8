"""ember.save / ember.load: round trips, and files that must be refused without running code."""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember import nn


def _round_trip(obj, tmp_path=None):
    if tmp_path is None:
        buf = io.BytesIO()
        ember.save(obj, buf)
        buf.seek(0)
        return ember.load(buf)
    path = tmp_path / "obj.ember"
    ember.save(obj, path)
    return ember.load(str(path))


@pytest.mark.parametrize(
    "dt", [ember.float32, ember.float64, ember.float16, ember.int64, ember.int8, ember.uint8,
           ember.bool, ember.complex64, ember.complex128],
)  # fmt: skip
def test_tensor_round_trip_every_dtype(dt) -> None:
    t = ember.tensor(np.arange(6).reshape(2, 3) % 2).to(dtype=dt)
    back = _round_trip(t)
    assert type(back) is ember.Tensor and back.dtype == dt and back.shape == t.shape
    np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_zero_dim_empty_and_noncontiguous_views(tmp_path) -> None:
    base = ember.arange(12.0).reshape(3, 4)
    view = base.t()[1:]
    scalar, empty = ember.tensor(3.5), ember.zeros(0, 3)
    back = _round_trip([view, scalar, empty], tmp_path)
    np.testing.assert_array_equal(back[0].numpy(), view.numpy())
    # PyTorch's format keeps a view's storage and strides
    assert back[0].stride() == view.stride() and back[1].shape == () and back[1].item() == 3.5
    assert back[2].shape == (0, 3)


def test_parameters_and_requires_grad_survive() -> None:
    p = nn.Parameter(ember.ones(2))
    frozen = nn.Parameter(ember.ones(2), requires_grad=False)
    leaf = ember.zeros(3).requires_grad_()
    back_p, back_frozen, back_leaf = _round_trip((p, frozen, leaf))
    assert type(back_p) is nn.Parameter and back_p.requires_grad
    assert type(back_frozen) is nn.Parameter and not back_frozen.requires_grad
    assert type(back_leaf) is ember.Tensor and back_leaf.requires_grad and back_leaf.is_leaf


def test_nested_python_values_round_trip() -> None:
    obj = {
        "ints": [1, -2, 2**62],
        "floats": (0.5, float("inf"), -float("inf")),
        "none": None,
        "flags": [True, False],
        "text": "héllo",
        3: "int key",
        (1, "a"): "tuple key",
        "complex": 1 + 2j,
        "dtype": ember.float64,
        "device": ember.device("cpu"),
        "size": ember.Size([2, 3]),
        "nested": OrderedDict([("b", [{"c": ()}]), ("a", [])]),
    }
    back = _round_trip(obj)
    nan = _round_trip(float("nan"))
    assert math.isnan(nan)
    assert back == obj
    assert type(back["floats"]) is tuple and type(back["nested"]) is OrderedDict
    assert list(back["nested"]) == ["b", "a"] and back["dtype"] is ember.float64
    assert type(back["size"]) is ember.Size


def test_shared_tensor_is_stored_once_and_loads_as_one_object() -> None:
    t = ember.ones(3)
    back = _round_trip({"a": t, "b": [t]})
    assert back["a"] is back["b"][0]


def _model() -> nn.Module:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(ember.randn(3, 2))
            self.inner = nn.Sequential(nn.Module())
            self.inner[0].b = nn.Parameter(ember.randn(2))
            self.register_buffer("count", ember.tensor(5))

    return Net()


def test_state_dict_round_trip_loads_into_a_model(tmp_path) -> None:
    src, dst = _model(), _model()
    sd = _round_trip(src.state_dict(), tmp_path)
    assert type(sd) is OrderedDict and list(sd) == list(src.state_dict())
    dst.load_state_dict(sd)
    for key, value in src.state_dict().items():
        np.testing.assert_array_equal(dst.state_dict()[key].numpy(), value.numpy())


def test_optimizer_state_dict_round_trip() -> None:
    w = nn.Parameter(ember.ones(2))
    w.grad = ember.ones(2)
    opt = ember.optim.Adam([w], lr=0.1)
    opt.step()
    back = _round_trip(opt.state_dict())
    assert list(back["state"]) == [0] and back["param_groups"][0]["betas"] == (0.9, 0.999)
    opt2 = ember.optim.Adam([nn.Parameter(ember.ones(2))], lr=0.1)
    opt2.load_state_dict(back)
    assert opt2.state_dict()["state"][0]["step"].item() == 1.0


def test_path_objects_and_file_objects(tmp_path) -> None:
    path = tmp_path / "t.ember"
    ember.save(ember.ones(2), path)
    assert ember.load(path).tolist() == [1.0, 1.0]
    with open(path, "rb") as f:
        assert ember.load(f).tolist() == [1.0, 1.0]
    with open(tmp_path / "u.ember", "wb") as f:
        ember.save({"x": 1}, f)
    assert ember.load(os.fspath(tmp_path / "u.ember")) == {"x": 1}


def test_unsavable_objects_raise_type_error() -> None:
    with pytest.raises(TypeError, match="cannot save an object of type"):
        ember.save(object(), io.BytesIO())
    with pytest.raises(TypeError, match="state_dict"):
        ember.save(_model(), io.BytesIO())
    with pytest.raises(RuntimeError, match="has no data"):
        ember.save(ember.empty(2, device="meta"), io.BytesIO())


# --------------------------------------------------------------------------- hostile files

_SIDE_EFFECT = []


def _record_side_effect(*args):
    _SIDE_EFFECT.append(args)
    return 0


class _Exploit:
    """Unpickling this calls _record_side_effect: what a malicious checkpoint would do."""

    def __reduce__(self):
        return (_record_side_effect, ("pwned",))


def test_malicious_pickle_is_refused_and_runs_nothing(tmp_path) -> None:
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps({"weights": _Exploit()}))
    pickle.loads(path.read_bytes())  # the file really does run code when unpickled
    assert _SIDE_EFFECT == [("pwned",)]
    _SIDE_EFFECT.clear()
    with pytest.raises(RuntimeError, match="neither a checkpoint written by torch.save"):
        ember.load(path)
    assert _SIDE_EFFECT == []


def _archive(manifest, arrays: dict[str, bytes] | None = None) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ember.json", manifest if isinstance(manifest, str) else json.dumps(manifest))
        for name, data in (arrays or {}).items():
            zf.writestr(name, data)
    buf.seek(0)
    return buf


def _npy(arr: np.ndarray, allow_pickle: bool = False) -> bytes:
    out = io.BytesIO()
    np.save(out, arr, allow_pickle=allow_pickle)
    return out.getvalue()


def _manifest(root, tensors: int = 0) -> dict:
    return {"format": "ember.save", "version": 1, "tensors": tensors, "root": root}


def _tensor_node(**over) -> dict:
    node = {"$": "tensor", "id": 0, "dtype": "float32", "shape": [2], "requires_grad": False,
            "parameter": False}  # fmt: skip
    node.update(over)
    return node


def test_pickle_inside_an_array_entry_is_refused_and_runs_nothing() -> None:
    evil = np.array([_Exploit()], dtype=object)
    buf = _archive(
        _manifest(_tensor_node(dtype="float32", shape=[1]), 1), {"tensors/0.npy": _npy(evil, True)}
    )
    _SIDE_EFFECT.clear()
    with pytest.raises(RuntimeError, match="not a plain .npy array"):
        ember.load(buf)
    assert _SIDE_EFFECT == []
    raw_pickle = pickle.dumps(_Exploit())
    buf = _archive(_manifest(_tensor_node(), 1), {"tensors/0.npy": raw_pickle})
    with pytest.raises(RuntimeError, match="not a plain .npy array"):
        ember.load(buf)
    assert _SIDE_EFFECT == []


@pytest.mark.parametrize(
    ("root", "arrays", "message"),
    [
        ({"$": "class", "module": "os", "name": "system"}, {}, "unknown kind 'class'"),
        ({"$": "tensors.Tensor"}, {}, "unknown kind"),
        ({"no_kind": 1}, {}, "'\\$' kind"),
        ([1, 2], {}, "'\\$' kind"),
        ({"$": "list"}, {}, "field 'items' must be list"),
        ({"$": "dict", "items": [[1]]}, {}, "\\[key, value\\] pair"),
        ({"$": "dict", "items": [[{"$": "list", "items": []}, 1]]}, {}, "unhashable key"),
        ({"$": "dtype", "name": "object"}, {}, "unknown dtype 'object'"),
        ({"$": "device", "type": "tpu"}, {}, "root"),  # a type ember does not know
        ({"$": "float", "value": "__import__('os')"}, {}, "must be 'nan'"),
        (_tensor_node(id=3), {}, "not in range"),
        (_tensor_node(id=True), {}, "field 'id' must be int"),
        (_tensor_node(), {}, "missing from the archive"),
        (
            _tensor_node(dtype="int64"),
            {"tensors/0.npy": _npy(np.zeros(2, np.float32))},
            "entry says int64",
        ),
        (
            _tensor_node(shape=[3]),
            {"tensors/0.npy": _npy(np.zeros(2, np.float32))},
            "entry says float32 \\[3\\]",
        ),
        (
            _tensor_node(requires_grad="yes"),
            {"tensors/0.npy": _npy(np.zeros(2, np.float32))},
            "requires_grad",
        ),
    ],
)
def test_malformed_entries_raise_clear_errors(root, arrays, message) -> None:
    count = 1 if arrays or (isinstance(root, dict) and root.get("$") == "tensor") else 0
    with pytest.raises(RuntimeError, match=message):
        ember.load(_archive(_manifest(root, count), arrays))


def test_malformed_archives_raise_clear_errors() -> None:
    with pytest.raises(RuntimeError, match="not valid JSON"):
        ember.load(_archive("{not json"))
    with pytest.raises(RuntimeError, match="does not describe an ember.save file"):
        ember.load(_archive({"format": "pickle", "root": None}))
    with pytest.raises(RuntimeError, match="unsupported format version"):
        ember.load(_archive({"format": "ember.save", "version": 99, "root": None}))
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w"):
        pass
    empty.seek(0)
    with pytest.raises(RuntimeError, match=r"neither a torch.save checkpoint .* nor an ember"):
        ember.load(empty)
    deep = {"$": "list", "items": []}
    for _ in range(300):
        deep = {"$": "list", "items": [deep]}
    with pytest.raises(RuntimeError, match="nesting deeper"):
        ember.load(_archive(_manifest(deep)))
    with pytest.raises(TypeError, match="pickle_module"):
        ember.load(io.BytesIO(), pickle_module=pickle)
