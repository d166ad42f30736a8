"""Small visible details that must be PyTorch's: grad_fn classes, named-tuple printing,
storage offsets of empty views, memory formats, factory ``out=``, ``*_like`` options,
bfloat16, loss-size warnings, the legacy ``library`` forms, reprs and dtype info."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ember

from .conftest import requires_torch, torch

pytestmark = requires_torch


def _kind(text: str) -> str:
    """A repr up to its address, with PyTorch's module names spelled as ember's."""
    return text.split(" object at")[0].replace("torch.", "ember.")


def _graph(lib: Any) -> dict[str, Any]:
    """grad_fns of a few everyday expressions, built with ``lib`` (ember or torch)."""
    a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = lib.tensor([[1.0, 0.5], [2.0, 1.5], [0.5, 3.0]], requires_grad=True)
    c = lib.tensor([1.0, -1.0], requires_grad=True)
    w = a * 1
    w[0].mul_(2)  # an in-place write through a view: the base gets CopySlices
    v = a * 1
    view = v[0]
    view.add_(1)

    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    return {
        "mul": (a * 2).grad_fn,
        "addmm": lib.addmm(c, a, b).grad_fn,
        "sum": a.sum().grad_fn,
        "sum_dim": a.sum(0).grad_fn,
        "max_dim": a.max(1).values.grad_fn,
        "unbind": a.unbind(0)[1].grad_fn,
        "relu": a.relu().grad_fn,
        "copy_slices": w.grad_fn,
        "written_view": view.grad_fn,
        "function": Twice.apply(a).grad_fn,
        "leaf": (a * 2).grad_fn.next_functions[0][0],
    }


def test_grad_fn_classes_and_names_are_pytorchs() -> None:
    ours, theirs = _graph(ember), _graph(torch)
    for key, t_fn in theirs.items():
        e_fn = ours[key]
        assert type(e_fn).__name__ == type(t_fn).__name__, key
        assert e_fn.name() == t_fn.name(), key
        assert _kind(repr(e_fn)) == _kind(repr(t_fn)), key
        assert isinstance(e_fn, ember.autograd.graph.Node), key
    # one class per kind of node, as PyTorch's
    a = ember.ones(2, requires_grad=True)
    assert type((a * 2).grad_fn) is type((a * 3).grad_fn)
    assert type((a * 2).grad_fn) is not type((a + 2).grad_fn)


def test_grad_fn_names_in_tensor_repr() -> None:
    e, t = _graph(ember), _graph(torch)
    assert e["copy_slices"].name() == t["copy_slices"].name() == "torch::autograd::CopySlices"
    a_e = ember.ones(2, requires_grad=True)
    a_t = torch.ones(2, requires_grad=True)
    w_e, w_t = a_e * 1, a_t * 1
    w_e[0].mul_(2)
    w_t[0].mul_(2)
    assert repr(w_e) == repr(w_t)  # grad_fn=<CopySlices>


# --------------------------------------------------------------------------- named tuples


def _swap(text: str) -> str:
    return text.replace("torch.", "ember.")


def _pair(lib: Any) -> tuple[Any, Any]:
    return lib.empty(0), lib.empty(0, dtype=lib.int64)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.max(x, 0),
        lambda lib, x: lib.min(x, 1, keepdim=True),
        lambda lib, x: x.sort(descending=True),
        lambda lib, x: x.topk(2),
        lambda lib, x: lib.max(x.detach().requires_grad_(), 1),
        lambda lib, x: lib.max(x, 0, out=_pair(lib)),
        lambda lib, x: lib.min(x, 1, True, out=_pair(lib)),
        lambda lib, x: lib.sort(x, out=_pair(lib)),
        lambda lib, x: lib.topk(x, 2, out=list(_pair(lib))),
        lambda lib, x: lib.max(input=x, dim=0, out=_pair(lib)),
    ],
)
def test_named_tuples_print_and_type_as_pytorchs(call: Callable[..., Any]) -> None:
    data = [[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]]
    ours, theirs = call(ember, ember.tensor(data)), call(torch, torch.tensor(data))
    assert repr(ours) == _swap(repr(theirs))
    assert str(ours) == _swap(str(theirs))
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours).__module__ == "ember.return_types"
    assert ours.values is ours[0] and ours.indices is ours[1]


def test_out_tuple_is_written_and_returned() -> None:
    x = ember.tensor([[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]])
    v, i = _pair(ember)
    r = ember.max(x, 0, out=(v, i))
    assert r.values is v and r.indices is i and v.tolist() == [4.0, 5.0, 6.0]
    assert i.tolist() == [1, 0, 1]


@pytest.mark.parametrize(
    "outs",
    [
        lambda lib: (lib.empty(0),),  # too few
        lambda lib: lib.empty(0),  # not a tuple
        lambda lib: (lib.empty(0), lib.empty(0)),  # float indices
        lambda lib: (lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int64)),
        lambda lib: (lib.empty(0), lib.empty(0, dtype=lib.int32)),
    ],
)
def test_out_tuple_errors_are_pytorchs(outs: Callable[[Any], Any]) -> None:
    x_t, x_e = torch.ones(2, 3), ember.ones(2, 3)
    with pytest.raises(Exception) as theirs:
        torch.max(x_t, 0, out=outs(torch))
    with pytest.raises(type(theirs.value)) as ours:
        ember.max(x_e, 0, out=outs(ember))
    if theirs.type is RuntimeError:  # (a TypeError lists the signatures, in each library's words)
        assert str(theirs.value) in str(ours.value)


def test_out_resize_of_a_nonempty_tensor_warns_as_pytorch() -> None:
    x = [[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]]
    with pytest.warns(UserWarning) as theirs:
        torch.sort(torch.tensor(x), out=(torch.empty(5), torch.empty(0, dtype=torch.int64)))
    with pytest.warns(UserWarning) as ours:
        v = ember.empty(5)
        ember.sort(ember.tensor(x), out=(v, ember.empty(0, dtype=ember.int64)))
    assert v.shape == (2, 3)
    t_msg = str(theirs[0].message).split(" (Triggered")[0]
    assert str(ours[0].message) == t_msg
    assert ours[0].filename == __file__  # attributed to the caller's line, as PyTorch's


def test_return_types_build_from_one_sequence_and_pickle() -> None:
    import pickle

    v, i = ember.tensor([1.0]), ember.tensor([0])
    r = ember.return_types.max((v, i))
    assert r.values is v and r.indices is i
    assert type(pickle.loads(pickle.dumps(r))) is ember.return_types.max
    with pytest.raises(TypeError, match="takes a 2-sequence"):
        ember.return_types.max((v,))
    assert set(torch.return_types.__all__) - {
        "pytree_register_structseq",
        "all_return_types",
    } <= set(ember.return_types.__all__)


# --------------------------------------------------------------------------- empty views

_EMPTY_VIEWS: list[tuple[tuple[int, ...], Callable[[Any], Any]]] = [
    ((0, 3), lambda x: x[:, 1]),
    ((0, 3), lambda x: x[:, 2:]),
    ((0, 3), lambda x: x.narrow(1, 1, 2)),
    ((0, 3), lambda x: x.diagonal(1)),
    ((0, 3), lambda x: x.select(1, 2)),
    ((3, 0), lambda x: x[1]),
    ((3, 0), lambda x: x[2:]),
    ((3, 0), lambda x: x[5:]),
    ((3, 0), lambda x: x[1:2]),
    ((3, 0), lambda x: x[::2]),
    ((3, 0), lambda x: x.narrow(0, 1, 2)),
    ((3, 0), lambda x: x.diagonal()),
    ((3, 0), lambda x: x.select(0, 2)),
    ((3, 0), lambda x: x.unbind(0)[2]),
    ((3, 0), lambda x: x.T[:, 1]),
    ((3, 0), lambda x: x.t()[:, 2]),
    ((3, 0), lambda x: x.movedim(0, 1)[:, 2]),
    ((3, 0), lambda x: x[1][None]),
    ((3, 0), lambda x: x[1].view(0)),
    ((3, 0), lambda x: x[1].view(1, 0)),
    ((3, 0), lambda x: x[1].reshape(0)),
    ((3, 0), lambda x: x[1].flatten()),
    ((3, 0), lambda x: x[1].unsqueeze(0)),
    ((3, 0), lambda x: x[1].expand(2, 0)),
    ((3, 0), lambda x: x[1].detach()),
    ((3, 0), lambda x: x[1].contiguous()),
    ((3, 0), lambda x: x[1].clone()),
    ((3, 0), lambda x: x[1:2].squeeze(0)),
    ((3, 0), lambda x: x[1].squeeze()),
    ((3, 0), lambda x: x[2].view(x.dtype)),
    ((3, 0), lambda x: x.as_strided((1, 0), (0, 1), 2)),
    ((2, 0, 3), lambda x: x[1, :, 2]),
    ((2, 0, 3), lambda x: x[1][:, 1:]),
    ((4, 0), lambda x: [t.storage_offset() for t in x.split(2)]),
    ((4, 0), lambda x: [t.storage_offset() for t in x.chunk(2)]),
    ((3, 4), lambda x: x[:, 4:]),
    ((3, 4), lambda x: x[3:]),
    ((3, 4), lambda x: x[7:]),
    ((3, 4), lambda x: x[3:, 2:]),
    ((3, 4), lambda x: x[:0, 2:]),
    ((3, 4), lambda x: x[1:1]),
    ((3, 4), lambda x: x[:, 2:2]),
    ((3, 4), lambda x: x.narrow(1, 4, 0)),
    ((3, 4), lambda x: x.diagonal(5)),
    ((3, 4), lambda x: x[2:].narrow(0, 1, 0)),
    ((3, 4), lambda x: [t.storage_offset() for t in x.split([3, 0])]),
    ((3, 4), lambda x: [t.storage_offset() for t in x.split([1, 0, 3], 1)[:2]]),
    ((3, 4), lambda x: x.as_strided((0,), (1,), 5)),
    ((3, 4), lambda x: x[1:][2:].view(0, 2, 2)),
    ((5,), lambda x: x[3:][5:]),
]


def _offset(view: Any) -> Any:
    return view if isinstance(view, list) else view.storage_offset()


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize(("shape", "view"), _EMPTY_VIEWS)
def test_storage_offset_of_empty_views_is_pytorchs(
    shape: tuple[int, ...], view: Callable[[Any], Any], device: str
) -> None:
    ours = _offset(view(ember.empty(shape, device=device)))
    theirs = _offset(view(torch.empty(shape, device=device)))
    assert ours == theirs


def test_storage_offset_of_empty_complex_views() -> None:
    for lib in (ember, torch):
        x = lib.empty(3, 0, dtype=lib.complex64)[1]
        assert (x.real.storage_offset(), lib.view_as_real(x).storage_offset()) == (2, 2)


# --------------------------------------------------------------------------- memory formats

_LAYOUTS: list[Callable[[Any], Any]] = [
    lambda lib: lib.zeros(2, 3, 4, 5),
    lambda lib: lib.zeros(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
    lambda lib: lib.zeros(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)[:, :, ::2],
    lambda lib: lib.zeros(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)[:, :2],
    lambda lib: lib.zeros(2, 3, 4, 5).permute(0, 2, 3, 1),
    lambda lib: lib.zeros(2, 1, 4, 5),
    lambda lib: lib.zeros(1, 3, 1, 1),
    # (no empty tensors: ember's tensors of at most one element that are not views report
    # row-major strides whatever they were made with, so their channels-last or transposed
    # copies differ from PyTorch's)
    lambda lib: lib.zeros(2, 3, 4, 5, 6).contiguous(memory_format=lib.channels_last_3d),
    lambda lib: lib.zeros(4, 6).t()[::2],
    lambda lib: lib.zeros(3, 4).expand(2, 3, 4),
    lambda lib: lib.zeros(6)[::2],
]
_FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def _outcome(fn: Callable[..., Any], *args: Any) -> Any:
    """What ``fn(*args)`` gives (strides of a tensor, or a value), or the type it raises."""
    try:
        r = fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return type(e)
    return r.stride() if hasattr(r, "stride") else r


def test_memory_format_objects_are_exported() -> None:
    for name in _FORMATS:
        fmt = getattr(ember, name)
        assert isinstance(fmt, ember.memory_format)
        assert repr(fmt) == _swap(repr(getattr(torch, name)))
    assert _swap(repr(torch.memory_format)) == repr(ember.memory_format)
    import pickle

    assert pickle.loads(pickle.dumps(ember.channels_last)) is ember.channels_last


@pytest.mark.parametrize("layout", _LAYOUTS)
@pytest.mark.parametrize("fmt", _FORMATS)
def test_memory_formats_match_pytorch(layout: Callable[[Any], Any], fmt: str) -> None:
    x_e, x_t = layout(ember), layout(torch)
    assert x_e.stride() == x_t.stride()
    f_e, f_t = getattr(ember, fmt), getattr(torch, fmt)
    for call in (
        lambda lib, x, f: x.is_contiguous(memory_format=f),
        lambda lib, x, f: x.contiguous(memory_format=f),
        lambda lib, x, f: x.contiguous(memory_format=f) is x,
        lambda lib, x, f: x.clone(memory_format=f),
        lambda lib, x, f: x.to(memory_format=f),
        lambda lib, x, f: x.to(lib.float64, memory_format=f),
        lambda lib, x, f: lib.empty_like(x, memory_format=f),
        lambda lib, x, f: lib.zeros_like(x, memory_format=f),
        lambda lib, x, f: lib.ones_like(x, memory_format=f),
        lambda lib, x, f: lib.full_like(x, 2.0, memory_format=f),
        lambda lib, x, f: lib.rand_like(x, memory_format=f),
        lambda lib, x, f: lib.empty(x.shape, memory_format=f),
        lambda lib, x, f: lib.empty_like(x),
        lambda lib, x, f: lib.randn_like(x),
    ):
        assert _outcome(call, ember, x_e, f_e) == _outcome(call, torch, x_t, f_t)


# --------------------------------------------------------------------------- *_like options

#: (the op, whether its values are determined: compared too)
_LIKES: list[tuple[Callable[..., Any], bool]] = [
    (lambda lib, x, **o: lib.zeros_like(x, **o), True),
    (lambda lib, x, **o: lib.ones_like(x, **o), True),
    (lambda lib, x, **o: lib.empty_like(x, **o), False),
    (lambda lib, x, **o: lib.full_like(x, 3, **o), True),
    (lambda lib, x, **o: lib.rand_like(x, **o), False),
    (lambda lib, x, **o: lib.randn_like(x, **o), False),
    (lambda lib, x, **o: lib.randint_like(x, 5, **o), False),
    (lambda lib, x, **o: x.new_zeros((3,), **o), True),
    (lambda lib, x, **o: x.new_ones((3,), **o), True),
    (lambda lib, x, **o: x.new_empty((3,), **o), False),
    (lambda lib, x, **o: x.new_full((3,), 2, **o), True),
]


def _described(t: Any, values: bool = False) -> tuple[Any, ...]:
    shown = t.tolist() if values and t.device.type == "cpu" else None
    return (t.device.type, str(t.dtype).split(".")[1], tuple(t.shape), t.stride(), shown)


@pytest.mark.parametrize(("like", "determined"), _LIKES)
@pytest.mark.parametrize(("source", "target"), [("cpu", "meta"), ("meta", "cpu"), ("cpu", "cpu")])
@pytest.mark.parametrize("dtype", [None, "int32", "float64"])
def test_like_ops_honour_device_and_dtype(
    like: Callable[..., Any], determined: bool, source: str, target: str, dtype: str | None
) -> None:
    def make(lib: Any) -> Any:
        x = lib.zeros(4, 6, device=source).t()[::2]  # not dense: the result is laid out anew
        options: dict[str, Any] = {"device": target}
        if dtype is not None:
            options["dtype"] = getattr(lib, dtype)
        return _outcome(lambda: _described(like(lib, x, **options), determined))

    ours, theirs = make(ember), make(torch)
    if target == "meta" and dtype == "int32" and ours is NotImplementedError:
        # rand_like/randn_like of integers: PyTorch's Meta kernels skip the dtype check its CPU
        # kernels make; ember's Meta rules make it too (the same error as on the cpu)
        assert _outcome(lambda: like(torch, torch.zeros(2), dtype=torch.int32)) is ours
        return
    assert ours == theirs


@pytest.mark.parametrize(("like", "determined"), _LIKES)
def test_like_ops_to_and_from_the_lazy_device(like: Callable[..., Any], determined: bool) -> None:
    x = ember.zeros(4, 6).t()
    on_lazy = like(ember, x, device="lazy")
    assert on_lazy.device.type == "lazy"
    expected = _described(like(ember, x))[1:4]
    assert _described(on_lazy.to("cpu"))[1:4] == expected
    back = like(ember, x.to("lazy"), device="cpu")
    assert back.device.type == "cpu" and _described(back)[1:4] == expected
    meta = like(ember, x.to("lazy"), device="meta")
    assert meta.device.type == "meta" and _described(meta)[1:4] == expected


# --------------------------------------------------------------------------- factories' out=

_FACTORY_OUTS: list[tuple[str, Callable[..., Any], bool]] = [
    # (name, call(lib, out, **options), whether the values are determined)
    ("zeros", lambda lib, out, **o: lib.zeros(2, 3, out=out, **o), True),
    ("zeros list", lambda lib, out, **o: lib.zeros([4], out=out, **o), True),
    ("ones", lambda lib, out, **o: lib.ones((2, 3), out=out, **o), True),
    ("full", lambda lib, out, **o: lib.full((2, 2), 3, out=out, **o), True),
    ("full float", lambda lib, out, **o: lib.full((3,), 2.5, out=out, **o), True),
    ("empty", lambda lib, out, **o: lib.empty(2, 3, out=out, **o), False),
    ("arange", lambda lib, out, **o: lib.arange(5, out=out, **o), True),
    ("arange start", lambda lib, out, **o: lib.arange(1, 4, out=out, **o), True),
    ("arange step", lambda lib, out, **o: lib.arange(0, 1, 0.25, out=out, **o), True),
    ("linspace", lambda lib, out, **o: lib.linspace(0, 1, 5, out=out, **o), True),
    ("eye", lambda lib, out, **o: lib.eye(3, out=out, **o), True),
    ("eye m", lambda lib, out, **o: lib.eye(2, 3, out=out, **o), True),
    ("rand", lambda lib, out, **o: lib.rand(2, 2, out=out, **o), False),
    ("randn", lambda lib, out, **o: lib.randn(3, out=out, **o), False),
    ("randint", lambda lib, out, **o: lib.randint(5, (2, 3), out=out, **o), False),
    ("randint low", lambda lib, out, **o: lib.randint(2, 5, (4,), out=out, **o), False),
]
_OUT_TENSORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("empty float", lambda lib: lib.empty(0)),
    ("empty long", lambda lib: lib.empty(0, dtype=lib.int64)),
    ("empty float64", lambda lib: lib.empty(0, dtype=lib.float64)),
    ("six floats", lambda lib: lib.empty(6)),
    ("right shape transposed", lambda lib: lib.zeros(3, 2).t()),
    ("strided view", lambda lib: lib.zeros(10)[::2]),
    ("requires grad", lambda lib: lib.zeros(4, requires_grad=True)),
    ("meta", lambda lib: lib.empty(0, device="meta")),
]


def _after(t: Any, determined: bool) -> tuple[Any, ...]:
    values = t.tolist() if determined and t.device.type == "cpu" else None
    return (t.device.type, str(t.dtype).split(".")[1], tuple(t.shape), values)


@pytest.mark.parametrize(("name", "call", "determined"), _FACTORY_OUTS, ids=lambda v: str(v))
@pytest.mark.parametrize(("kind", "make_out"), _OUT_TENSORS, ids=lambda v: str(v))
def test_factory_out_is_pytorchs(
    name: str, call: Callable[..., Any], determined: bool, kind: str, make_out: Callable[..., Any]
) -> None:
    def run(lib: Any) -> Any:
        out = make_out(lib)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            r = _outcome(call, lib, out)
        if isinstance(r, type):
            return r
        shown = [str(w.message).split(" (Triggered")[0] for w in seen]
        return _after(out, determined), out.stride() if out.numel() > 1 else None, shown

    assert run(ember) == run(torch)


@pytest.mark.parametrize(
    "options",
    [
        {"dtype": "int64"},
        {"dtype": "float32"},
        {"device": "cpu"},
        {"device": "meta"},
        {"layout": "strided"},
        {"requires_grad": True},
        {"dtype": "float64", "device": "cpu"},
    ],
    ids=str,
)
def test_factory_out_keywords_are_checked_as_pytorchs(options: dict[str, Any]) -> None:
    def run(lib: Any) -> Any:
        kw = {k: getattr(lib, v) if k in ("dtype", "layout") else v for k, v in options.items()}
        out = lib.empty(0)
        try:
            r = lib.zeros(2, out=out, **kw)
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            return type(e), str(e)
        return r is out, _after(out, True), out.requires_grad

    assert run(ember) == run(torch)


def test_factory_out_none_is_no_out() -> None:
    assert ember.zeros(2, out=None).tolist() == torch.zeros(2, out=None).tolist()


# --------------------------------------------------------------------------- loss size warnings


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss"])
@pytest.mark.parametrize(
    ("input_shape", "target_shape"), [((3,), (2, 1)), ((2, 3), (3,)), ((4,), (4,)), ((1,), ())]
)
def test_pointwise_losses_warn_of_broadcast_targets(
    loss: str, input_shape: tuple[int, ...], target_shape: tuple[int, ...]
) -> None:
    def run(lib: Any) -> Any:
        fn = getattr(importlib.import_module(f"{lib.__name__}.nn.functional"), loss)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            value = fn(lib.ones(input_shape), lib.zeros(target_shape)).item()
        return value, [(w.category, _swap(str(w.message)), w.filename) for w in seen]

    assert run(ember) == run(torch)  # the same message, attributed to this file


def test_loss_module_warning_points_where_pytorchs_does() -> None:
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="Using a target size") as seen:
            lib.nn.MSELoss()(lib.ones(3), lib.zeros(2, 1))
        assert seen[0].filename.endswith("nn/modules/loss.py")


def test_bce_with_logits_size_error_is_pytorchs() -> None:
    errors = []
    for lib in (ember, torch):
        with pytest.raises(ValueError) as e:
            lib.nn.functional.binary_cross_entropy_with_logits(lib.ones(3), lib.zeros(2, 1))
        errors.append(_swap(str(e.value)))
    assert errors[0] == errors[1]


# --------------------------------------------------------------------------- library forms


def _library_forms(lib_mod: Any, ns: str) -> list[Any]:
    """Every registration form PyTorch 2.13 accepts, in ``lib_mod`` (ember or torch)."""
    tensor = lib_mod.ones(2)
    lib = lib_mod.library.Library(ns, "DEF")
    try:
        seen = []
        lib.define("twice(Tensor x) -> Tensor")

        @lib_mod.library.impl(lib, "twice", "CPU")  # legacy: (lib, name, key)
        def twice(x: Any) -> Any:
            return x * 2

        seen.append(callable(twice) and twice.__name__)
        seen.append(getattr(lib_mod.ops, ns).twice(tensor).tolist())
        lib_mod.library.define(f"{ns}::inc", "(Tensor x) -> Tensor", lib=lib)
        lib_mod.library.impl(f"{ns}::inc", "cpu", lib=lib)(lambda x: x + 1)
        lib_mod.library.impl(f"{ns}::inc", "Meta", lambda x: x.new_empty(x.shape), lib=lib)
        seen.append(getattr(lib_mod.ops, ns).inc(tensor).tolist())
        meta = getattr(lib_mod.ops, ns).inc(lib_mod.ones(3, device="meta"))
        seen.append((meta.device.type, tuple(meta.shape)))

        @lib_mod.library.define(lib, "dec(Tensor x) -> Tensor")  # legacy: (lib, schema)
        def dec(x: Any) -> Any:
            return x - 1

        seen.append(getattr(lib_mod.ops, ns).dec(tensor).tolist())
        lib_mod.library.define(f"{ns}::both", "(Tensor x) -> Tensor", lib=lib)
        lib_mod.library.impl(f"{ns}::both", ["cpu", "meta"], lambda x: x * 1, lib=lib)
        seen.append(getattr(lib_mod.ops, ns).both(tensor).tolist())
        for bad in (
            lambda: lib_mod.library.define(f"{ns}::one(Tensor x) -> Tensor", lib=lib),
            lambda: lib_mod.library.define("nonamespace", "(Tensor x) -> Tensor"),
            lambda: lib_mod.library.define(3, "(Tensor x) -> Tensor"),
        ):
            seen.append(_outcome(bad))
        return seen
    finally:
        lib._destroy()


def test_library_forms_are_pytorchs() -> None:
    assert _library_forms(ember, "fidelity_e") == _library_forms(torch, "fidelity_t")


def test_library_registrations_end_with_the_library() -> None:
    _library_forms(ember, "fidelity_gone")
    assert not hasattr(ember.ops.fidelity_gone, "inc")


# --------------------------------------------------------------------------- reprs, dtype info


class _Nested:
    """Builds the same nested model in either library (for the module repr)."""

    @staticmethod
    def build(lib: Any) -> Any:
        nn = lib.nn

        class Model(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.a = nn.Linear(2, 2)
                self.layers = nn.ModuleList([nn.Linear(1, 1), nn.Dropout(0.2)])
                self.d = nn.ModuleDict({"x": nn.Identity()})
                self.c = nn.Conv2d(1, 2, 3, stride=2, padding=1)
                self.seq = nn.Sequential(nn.Linear(3, 1, bias=False), nn.ReLU())
                self.e = nn.Embedding(10, 3)
                self.n = nn.LayerNorm(4)

        return Model()


def _shown(lib: Any, fn: Callable[[Any], Any]) -> str:
    """``repr`` of what ``fn(lib)`` gives, or of the exception it raises, in ember's words."""
    try:
        value = fn(lib)
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return _swap(f"{type(e).__name__}: {e}")
    return _swap(value if isinstance(value, str) else repr(value))


_SURVEY: list[tuple[str, Callable[[Any], Any]]] = [
    ("dtype", lambda lib: [lib.float32, str(lib.float64), lib.int64, lib.bool, lib.complex64]),
    ("device", lambda lib: [lib.device("cpu"), str(lib.device("cpu")), lib.device("meta")]),
    ("Size", lambda lib: [lib.Size([2, 3]), str(lib.Size([])), lib.zeros(2, 1).shape]),
    ("nested module", lambda lib: _Nested.build(lib)),
    ("sequential", lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Tanh())),
    ("sgd", lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1, momentum=0.9)),
    ("adam", lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.zeros(2))], lr=0.01)),
    ("requires_grad", lambda lib: lib.tensor([1.0, 2.0], requires_grad=True)),
    ("grad_fn", lambda lib: (lib.tensor([1.0, 2.0], requires_grad=True) * 2).sum()),
    ("empty int64", lambda lib: lib.tensor([], dtype=lib.int64)),
    ("empty 2-d", lambda lib: [lib.zeros(0, 3), lib.zeros(2, 0, dtype=lib.int32)]),
    ("parameter", lambda lib: lib.nn.Parameter(lib.ones(2))),
    ("meta tensor", lambda lib: lib.empty(2, 3, device="meta")),
    (
        "dtype flags",
        lambda lib: [
            (d.is_floating_point, d.is_complex, d.is_signed, d.itemsize)
            for d in (lib.float32, lib.float16, lib.int64, lib.uint8, lib.bool, lib.complex128)
        ],
    ),
    ("finfo", lambda lib: [lib.finfo(d) for d in (lib.float32, lib.float64, lib.float16)]),
    ("finfo default", lambda lib: lib.finfo()),
    ("finfo complex", lambda lib: lib.finfo(lib.complex128)),
    (
        "finfo fields",
        lambda lib: [
            (f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.bits, f.resolution, f.dtype)
            for f in (lib.finfo(lib.float32), lib.finfo(lib.float16))
        ],
    ),
    ("finfo of int", lambda lib: lib.finfo(lib.int32)),
    ("finfo equality", lambda lib: lib.finfo(lib.float32) == lib.finfo(lib.float32)),
    (
        "iinfo",
        lambda lib: [
            (i, i.min, i.max, i.bits, i.dtype)
            for i in (lib.iinfo(d) for d in (lib.int8, lib.uint8, lib.int16, lib.int32, lib.int64))
        ],
    ),
    ("iinfo of bool", lambda lib: lib.iinfo(lib.bool)),
    ("iinfo of float", lambda lib: lib.iinfo(lib.float32)),
    ("default dtype", lambda lib: lib.get_default_dtype()),
    (
        "element_size",
        lambda lib: [lib.ones(1, dtype=d).element_size() for d in (lib.float64, lib.bool)],
    ),
    (
        "data_ptr",
        lambda lib: [
            (x := lib.ones(2, 3))[1].data_ptr() - x.data_ptr(),
            x.T.data_ptr() - x.data_ptr(),
        ],
    ),
    (
        "untyped_storage",
        lambda lib: [
            (x := lib.arange(6.0).view(2, 3)).untyped_storage().nbytes(),
            len(x[1].untyped_storage()),
            x[1].untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
            x.t().untyped_storage().data_ptr() == x.data_ptr(),
            x.untyped_storage().element_size(),
            x.untyped_storage().device,
            lib.ones(2, dtype=lib.uint8).untyped_storage().tolist(),
            lib.empty(2, 3, device="meta").untyped_storage().nbytes(),
            lib.empty(2, 3, device="meta").untyped_storage().data_ptr(),
        ],
    ),
    ("untyped_storage repr", lambda lib: lib.arange(2, dtype=lib.uint8).untyped_storage()),
    ("is_nonzero", lambda lib: [lib.is_nonzero(lib.tensor([1.0])), lib.tensor(0).is_nonzero()]),
    ("is_nonzero of two", lambda lib: lib.is_nonzero(lib.tensor([1.0, 2.0]))),
    ("is_nonzero of none", lambda lib: lib.is_nonzero(lib.tensor([]))),
    ("bool of none", lambda lib: bool(lib.tensor([]))),
    (
        "is_leaf",
        lambda lib: [
            (a := lib.ones(2, requires_grad=True)).is_leaf,
            (a * 2).is_leaf,
            lib.ones(2).is_leaf,
            (a * 2).detach().is_leaf,
        ],
    ),
    (
        "retain_grad",
        lambda lib: [((b := lib.ones(2, requires_grad=True) * 2).retain_grad(), b.retains_grad)],
    ),
    ("hook without grad", lambda lib: lib.ones(2).register_hook(lambda g: g)),
    ("requires_grad_ of int", lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_()),
    (
        "requires_grad_(False) of non-leaf",
        lambda lib: (lib.ones(2, requires_grad=True) * 2).requires_grad_(False),
    ),
    (
        "requires_grad_(True) of non-leaf",
        lambda lib: (lib.ones(2, requires_grad=True) * 2).requires_grad_(),
    ),
    (
        "format",
        lambda lib: [f"{lib.tensor(3.14159):.3f}", f"{lib.tensor(3):d}", f"{lib.tensor(2.5)}"],
    ),
    ("format of a vector", lambda lib: f"{lib.tensor([1.0, 2.0]):.3f}"),
    ("format plain", lambda lib: [f"{lib.tensor([1.0, 2.0])}", f"{lib.tensor(2.5):>10}"]),
    ("layout", lambda lib: [lib.zeros(2).layout, lib.strided, type(lib.strided)]),
]


@pytest.mark.parametrize(("what", "fn"), _SURVEY, ids=[w for w, _ in _SURVEY])
def test_everyday_objects_print_and_behave_as_pytorchs(what: str, fn: Callable[[Any], Any]) -> None:
    theirs = _shown(torch, fn)
    ours = _shown(ember, fn)
    if what == "requires_grad_ of int":  # PyTorch's message, then which dtypes ember accepts
        assert ours.startswith(theirs)
        return
    assert ours == theirs


@pytest.mark.parametrize(
    "options",
    [
        {"precision": 2},
        {"precision": 4, "sci_mode": True},
        {"threshold": 5, "edgeitems": 2},
        {"linewidth": 20},
        {"profile": "short"},
        {"profile": "full"},
    ],
    ids=str,
)
def test_printoptions_are_pytorchs(options: dict[str, Any]) -> None:
    def show(lib: Any) -> str:
        lib.set_printoptions(**options)
        try:
            return _swap(repr([lib.tensor([1.23456, 2.5]), lib.arange(10), lib.arange(20.0)]))
        finally:
            lib.set_printoptions(profile="default")

    assert show(ember) == show(torch)


# --------------------------------------------------------------------------- bfloat16

try:
    import ml_dtypes  # noqa: F401 - only whether it is there
except ImportError:
    ml_dtypes = None
needs_ml_dtypes = pytest.mark.skipif(
    ml_dtypes is None, reason="ember.bfloat16 needs ml_dtypes (pip install 'ember[bf16]')"
)

_BF_VALUES = [[0.5, -1.25, 2.0], [3.0, 0.1, -0.7]]
_BF_OTHER = [[1.0, 2.0, 0.5], [0.25, -1.0, 4.0]]


def _bf16_grad(lib: Any, f: Callable[[Any], Any]) -> Any:
    a = lib.tensor(_BF_VALUES, dtype=lib.bfloat16, requires_grad=True)
    f(a).sum().backward()
    return a.grad


_BF16: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("tensor", lambda lib, x, y: x),
    ("0-dim", lambda lib, x, y: lib.tensor(-0.0, dtype=lib.bfloat16)),
    ("large and small", lambda lib, x, y: lib.tensor([1e5, 1e-5, 3.0], dtype=lib.bfloat16)),
    ("whole numbers", lambda lib, x, y: lib.tensor([1.0, 2.0], dtype=lib.bfloat16)),
    (
        "nan and inf",
        lambda lib, x, y: lib.tensor([float("nan"), -float("inf")], dtype=lib.bfloat16),
    ),
    ("zeros", lambda lib, x, y: lib.zeros(2, dtype=lib.bfloat16)),
    ("full", lambda lib, x, y: lib.full((2,), 1.1, dtype=lib.bfloat16)),
    ("full overflow", lambda lib, x, y: lib.full((1,), 3.5e38, dtype=lib.bfloat16)),
    ("arange", lambda lib, x, y: lib.arange(5, dtype=lib.bfloat16)),
    ("linspace", lambda lib, x, y: lib.linspace(0, 1, 4, dtype=lib.bfloat16)),
    ("eye", lambda lib, x, y: lib.eye(2, dtype=lib.bfloat16)),
    ("ones_like", lambda lib, x, y: lib.ones_like(x)),
    ("from float32", lambda lib, x, y: lib.tensor([1 / 3, 1e-3]).to(lib.bfloat16)),
    ("from int64", lambda lib, x, y: lib.tensor([1, 300, -7]).bfloat16()),
    ("to float32", lambda lib, x, y: x.float()),
    ("to float16", lambda lib, x, y: x.half()),
    ("to int32", lambda lib, x, y: x.to(lib.int32)),
    ("to bool", lambda lib, x, y: x.bool()),
    ("type name", lambda lib, x, y: x.type()),
    ("item", lambda lib, x, y: x[1, 1].item()),
    ("tolist", lambda lib, x, y: x.tolist()),
    ("element_size", lambda lib, x, y: x.element_size()),
    ("add", lambda lib, x, y: x + y),
    ("sub", lambda lib, x, y: x - y),
    ("mul", lambda lib, x, y: x * y),
    ("div", lambda lib, x, y: x / y),
    ("python int", lambda lib, x, y: x * 3),
    ("python float", lambda lib, x, y: x + 0.1),
    ("rsub", lambda lib, x, y: 1 - x),
    ("pow", lambda lib, x, y: x**2),
    ("with float16", lambda lib, x, y: x + y.half()),
    ("with float32", lambda lib, x, y: x + y.float()),
    ("with float64", lambda lib, x, y: x * y.double()),
    ("with int64", lambda lib, x, y: x + lib.ones(2, 3, dtype=lib.int64)),
    ("with complex64", lambda lib, x, y: x + lib.ones(2, 3, dtype=lib.complex64)),
    (
        "promote_types",
        lambda lib, x, y: [
            lib.promote_types(lib.bfloat16, d)
            for d in (lib.float16, lib.float32, lib.int8, lib.bool, lib.complex64, lib.float64)
        ],
    ),
    ("result_type", lambda lib, x, y: lib.result_type(x, 1.5)),
    (
        "dtype flags",
        lambda lib, x, y: (
            lib.bfloat16.is_floating_point,
            lib.bfloat16.is_signed,
            lib.bfloat16.itemsize,
            lib.bfloat16.to_complex(),
        ),
    ),
    ("finfo", lambda lib, x, y: lib.finfo(lib.bfloat16)),
    ("neg", lambda lib, x, y: -x),
    ("abs", lambda lib, x, y: x.abs()),
    ("exp", lambda lib, x, y: x.exp()),
    ("sqrt", lambda lib, x, y: y.abs().sqrt()),
    ("sigmoid", lambda lib, x, y: x.sigmoid()),
    ("tanh", lambda lib, x, y: x.tanh()),
    ("relu", lambda lib, x, y: x.relu()),
    ("clamp", lambda lib, x, y: x.clamp(-1, 1)),
    ("comparison", lambda lib, x, y: (x < y, x == 0.5)),
    ("where", lambda lib, x, y: lib.where(x > 0, x, y)),
    ("isnan", lambda lib, x, y: lib.isnan(x / 0 * 0)),
    ("sum", lambda lib, x, y: (x.sum(), x.sum(1))),
    ("mean", lambda lib, x, y: (x.mean(), x.mean(0))),
    ("var", lambda lib, x, y: (x.var(), x.std(1))),
    ("max", lambda lib, x, y: (x.max(), x.max(1), x.argmax())),
    ("cumsum", lambda lib, x, y: x.cumsum(1)),
    ("sort", lambda lib, x, y: x.sort()),
    ("softmax", lambda lib, x, y: x.softmax(1)),
    ("mm", lambda lib, x, y: x @ y.t()),
    ("linear", lambda lib, x, y: lib.nn.functional.linear(x, y)),
    ("layer_norm", lambda lib, x, y: lib.nn.functional.layer_norm(x, (3,))),
    ("mse_loss", lambda lib, x, y: lib.nn.functional.mse_loss(x, y)),
    ("cross_entropy", lambda lib, x, y: lib.nn.functional.cross_entropy(x, lib.tensor([0, 2]))),
    ("indexing", lambda lib, x, y: (x[:, [0, 2]], x[x > 0])),
    ("cat", lambda lib, x, y: lib.cat([x, y])),
    (
        "requires_grad repr",
        lambda lib, x, y: lib.zeros(2, dtype=lib.bfloat16, requires_grad=True) * 1,
    ),
    ("grad", lambda lib, x, y: _bf16_grad(lib, lambda a: a * a)),
    (
        "grad of linear",
        lambda lib, x, y: _bf16_grad(lib, lambda a: lib.nn.functional.linear(a, y).relu()),
    ),
]


@needs_ml_dtypes
@pytest.mark.parametrize(("what", "fn"), _BF16, ids=[w for w, _ in _BF16])
def test_bfloat16_as_pytorchs(what: str, fn: Callable[[Any, Any, Any], Any]) -> None:
    def run(lib: Any) -> str:
        bf = lib.bfloat16
        return _shown(
            lib, lambda m: fn(m, m.tensor(_BF_VALUES, dtype=bf), m.tensor(_BF_OTHER, dtype=bf))
        )

    assert run(ember) == run(torch)


@needs_ml_dtypes
def test_bfloat16_saves_and_loads(tmp_path: Any) -> None:
    x = ember.tensor(_BF_VALUES, dtype=ember.bfloat16)
    ember.save(x, tmp_path / "x.pt")
    y = ember.load(tmp_path / "x.pt")
    assert y.dtype is ember.bfloat16 and y.tolist() == x.tolist()


def test_without_ml_dtypes_bfloat16_names_the_extra() -> None:
    """In a fresh interpreter where ml_dtypes can't be imported."""
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import ember\n"
        "assert not hasattr(ember, 'bfloat16')\n"
        "for use in (lambda: ember.bfloat16, lambda: ember.ones(2).bfloat16()):\n"
        "    try:\n"
        "        use()\n"
        "    except AttributeError as e:\n"
        "        assert \"pip install 'ember[bf16]'\" in str(e), e\n"
        "    else:\n"
        "        raise AssertionError('no error')\n"
        "assert (ember.ones(2) + 1).tolist() == [2.0, 2.0]\n"
        "print('ok')\n"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
