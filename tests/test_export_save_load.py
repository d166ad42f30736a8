"""``ember.export.save``/``load`` (NOTE [export files] in ember/export/_serialize.py): a
saved program loads back with the same graph code, signature, state and outputs, also
with subgraphs (``cond``), buffers that are written, constants and extra files; a file
names only ops, so loading runs no code of its own."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest

import ember


class _Net(ember.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = ember.nn.Conv2d(2, 4, 3, padding=1)
        self.bn = ember.nn.BatchNorm2d(4)
        self.lin = ember.nn.Linear(4 * 5 * 5, 3)
        self.register_buffer("scale", ember.tensor(2.0), persistent=False)

    def forward(self, x: Any, *, shift: float = 0.0) -> Any:
        h = ember.relu(self.bn(self.conv(x))).to(memory_format=ember.contiguous_format)
        y = self.lin(h.flatten(1)) * self.scale + shift
        return ember.cond(y.sum() > 0, lambda y: y.softmax(-1), lambda y: y.neg(), (y,)), h


def _round_trip(ep: Any, **kw: Any) -> Any:
    buf = io.BytesIO()
    ember.export.save(ep, buf, **kw)
    return ember.export.load(io.BytesIO(buf.getvalue()))


def test_a_loaded_program_is_the_saved_one(tmp_path: Any) -> None:
    ember.manual_seed(0)
    net = _Net().eval()
    x = ember.randn(2, 2, 5, 5)
    ep = ember.export.export(net, (x,), {"shift": 0.5})
    path = tmp_path / "net.pt2"
    ember.export.save(ep, path)
    back = ember.export.load(path)
    assert back.graph_module.code == ep.graph_module.code
    for name, sub in ep.graph_module.named_modules():
        assert dict(back.graph_module.named_modules())[name].code == sub.code
    assert str(back.graph_signature) == str(ep.graph_signature)
    assert set(back.state_dict) == set(ep.state_dict)
    assert all(ember.equal(back.state_dict[k], v) for k, v in ep.state_dict.items())
    assert set(back.constants) == {"scale"}
    assert ember.equal(back.example_inputs[0][0], x) and back.example_inputs[1] == {"shift": 0.5}
    for sign in (1.0, -1.0):
        inp = x * sign
        with ember.no_grad():
            want = ep.module()(inp, shift=0.5)
            got = back.module()(inp, shift=0.5)
        for g, w in zip(got, want, strict=True):
            assert ember.allclose(g, w)
    decomposed = back.run_decompositions()
    with ember.no_grad():
        want = ep.module()(x, shift=0.5)
        assert ember.allclose(decomposed.module()(x, shift=0.5)[0], want[0])


def test_a_written_buffer_is_written_after_loading_too() -> None:
    bn = ember.nn.BatchNorm1d(3)  # training: running stats and num_batches_tracked change
    x = ember.randn(4, 3)
    back = _round_trip(ember.export.export(bn, (x,)))
    m = back.module()
    m(x)
    bn(x)
    for k, v in bn.state_dict().items():
        assert ember.allclose(m.state_dict()[k].float(), v.float()), k


def test_extra_files_and_the_archive_layout() -> None:
    ep = ember.export.export(ember.nn.Linear(2, 2), (ember.ones(1, 2),))
    buf = io.BytesIO()
    ember.export.save(ep, buf, extra_files={"note.txt": "hello"})
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        assert set(z.namelist()) == {"program.json", "tensors.pt", "extra/note.txt"}
        program = json.loads(z.read("program.json"))
    targets = {n.get("target") for n in program["graph"]["nodes"]} - {None}
    assert targets == {"ember.ops.aten.linear.default"}
    extra = {"note.txt": ""}
    ember.export.load(io.BytesIO(buf.getvalue()), extra_files=extra)
    assert extra == {"note.txt": "hello"}


def test_a_file_naming_anything_but_an_op_is_refused() -> None:
    ep = ember.export.export(ember.nn.Linear(2, 2), (ember.ones(1, 2),))
    buf = io.BytesIO()
    ember.export.save(ep, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    program = json.loads(src.read("program.json"))
    for n in program["graph"]["nodes"]:
        if n["op"] == "call_function":
            n["target"] = "os.system"
    bad = io.BytesIO()
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("program.json", json.dumps(program))
        z.writestr("tensors.pt", src.read("tensors.pt"))
    with pytest.raises(RuntimeError, match="'os.system', which is not an op"):
        ember.export.load(io.BytesIO(bad.getvalue()))


def test_what_cannot_be_saved_is_refused_by_name() -> None:
    ep = ember.export.export(ember.nn.Linear(2, 2), (ember.ones(1, 2),))
    node = next(n for n in ep.graph.nodes if n.op == "call_function")
    node.kwargs = {"note": object()}
    with pytest.raises(RuntimeError, match="takes a object"):
        ember.export.save(ep, io.BytesIO())
    with pytest.raises(TypeError, match="expected an ExportedProgram"):
        ember.export.save(ember.nn.Linear(2, 2), io.BytesIO())
