"""nn.Module, Parameter and the containers against PyTorch's behaviour."""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember import nn
from tests.conftest import requires_torch, torch

pytestmark = requires_torch


def make_model(lib):
    """The same small nested model, built with ``lib`` (ember or torch), same weights."""

    class Affine(lib.nn.Module):
        def __init__(self, n_in: int, n_out: int, seed: int) -> None:
            super().__init__()
            rng = np.random.default_rng(seed)
            self.n_in, self.n_out = n_in, n_out
            self.weight = lib.nn.Parameter(
                lib.tensor(rng.standard_normal((n_out, n_in)).astype(np.float32))
            )
            self.bias = lib.nn.Parameter(lib.tensor(rng.standard_normal(n_out).astype(np.float32)))

        def forward(self, x):
            return x @ self.weight.t() + self.bias

        def extra_repr(self) -> str:
            return f"in_features={self.n_in}, out_features={self.n_out}"

    class Scale(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("factor", lib.tensor([2.0]))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)

        def forward(self, x):
            return x * self.factor

    class Block(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = Affine(4, 4, 1)
            self.scale = Scale()

        def forward(self, x):
            return self.scale(self.proj(x))

    class Net(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inp = Affine(3, 4, 0)
            self.blocks = lib.nn.ModuleList([Block(), Block()])
            self.heads = lib.nn.ModuleDict({"a": Affine(4, 2, 2), "b": Scale()})
            self.seq = lib.nn.Sequential(Scale(), lib.nn.Sequential(Scale()))
            self.register_buffer("steps", lib.zeros((), dtype=lib.int64))
            self.empty = None

        def forward(self, x):
            x = self.inp(x)
            for block in self.blocks:
                x = block(x)
            return self.heads["a"](self.seq(x))

    return Net()


def _np(t) -> np.ndarray:
    return t.detach().numpy()


def test_repr_matches_torch() -> None:
    assert repr(make_model(ember)) == repr(make_model(torch))


def test_state_dict_keys_values_and_order_match_torch() -> None:
    mine, theirs = make_model(ember).state_dict(), make_model(torch).state_dict()
    assert isinstance(mine, OrderedDict)
    assert list(mine) == list(theirs)
    for key in theirs:
        np.testing.assert_array_equal(_np(mine[key]), _np(theirs[key]))
        assert not mine[key].requires_grad
    assert list(mine._metadata) == list(theirs._metadata)


def test_state_dict_prefix_and_keep_vars() -> None:
    model = make_model(ember)
    sd = model.state_dict(prefix="m.", keep_vars=True)
    assert list(sd)[0] == "m.steps" and sd["m.inp.weight"] is model.inp.weight
    assert list(sd) == ["m." + k for k in make_model(torch).state_dict()]


def test_named_parameters_buffers_modules_match_torch() -> None:
    m, t = make_model(ember), make_model(torch)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in m.named_parameters(prefix="x", recurse=False)] == [
        n for n, _ in t.named_parameters(prefix="x", recurse=False)
    ]
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in m.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in m.named_children()] == [n for n, _ in t.named_children()]
    assert len(list(m.parameters())) == len(list(t.parameters()))
    assert len(list(m.modules())) == len(list(t.modules()))
    assert len(list(m.children())) == len(list(t.children()))


def test_shared_parameters_and_modules_are_listed_once() -> None:
    for lib in (ember, torch):
        shared = lib.nn.Sequential(lib.nn.Module())
        outer = lib.nn.Module()
        outer.a = shared
        outer.b = shared
        outer.w = lib.nn.Parameter(lib.ones(1))
        outer.w2 = outer.w
        assert [n for n, _ in outer.named_modules()] == ["", "a", "a.0"]
        assert [n for n, _ in outer.named_parameters()] == ["w"]
        assert [n for n, _ in outer.named_parameters(remove_duplicate=False)] == ["w", "w2"]
        assert list(outer.state_dict()) == ["w", "w2"]


def test_forward_matches_torch() -> None:
    x = np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)
    out = make_model(ember)(ember.tensor(x))
    expected = make_model(torch)(torch.tensor(x))
    np.testing.assert_allclose(_np(out), _np(expected), rtol=1e-5)


def test_load_state_dict_round_trip_and_result() -> None:
    src, dst = make_model(ember), make_model(ember)
    with ember.no_grad():
        for p in src.parameters():
            p.mul_(3)
    result = dst.load_state_dict(src.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    for key, value in src.state_dict().items():
        np.testing.assert_array_equal(_np(dst.state_dict()[key]), _np(value))
    assert isinstance(dst.inp.weight, nn.Parameter) and dst.inp.weight.requires_grad


def test_load_state_dict_missing_and_unexpected_match_torch() -> None:
    results = []
    for lib in (ember, torch):
        model = make_model(lib)
        sd = model.state_dict()
        del sd["inp.bias"], sd["blocks.1.scale.factor"]
        sd["extra"] = lib.ones(1)
        sd["blocks.0.nothing"] = lib.ones(1)
        sd["nochild.w"] = lib.ones(1)
        res = model.load_state_dict(sd, strict=False)
        results.append((res.missing_keys, res.unexpected_keys, repr(res)))
        with pytest.raises(RuntimeError) as info:
            model.load_state_dict(sd)
        results.append(str(info.value))
    assert results[:2] == results[2:]


def test_load_state_dict_size_mismatch_message_matches_torch() -> None:
    messages = []
    for lib in (ember, torch):
        model = make_model(lib)
        sd = model.state_dict()
        sd["inp.weight"] = lib.zeros(2, 2)
        with pytest.raises(RuntimeError) as info:
            model.load_state_dict(sd)
        messages.append(str(info.value).replace("torch.", "ember."))
    assert messages[0] == messages[1]


def test_load_state_dict_casts_and_assign() -> None:
    model = make_model(ember)
    sd = {
        k: v.to(dtype=ember.float64) if v.is_floating_point() else v
        for k, v in model.state_dict().items()
    }
    model.load_state_dict(sd)
    assert model.inp.weight.dtype == ember.float32
    weight = model.inp.weight
    model.load_state_dict(sd, assign=True)
    assert model.inp.weight is not weight and model.inp.weight.dtype == ember.float64
    assert isinstance(model.inp.weight, nn.Parameter) and model.inp.weight.requires_grad
    with pytest.raises(TypeError, match="dict-like"):
        model.load_state_dict([1, 2])


def test_setattr_registration_and_errors_match_torch() -> None:
    for lib in (ember, torch):
        m = lib.nn.Module()
        m.w = lib.nn.Parameter(lib.ones(2))
        assert "w" in m._parameters and "w" not in m.__dict__
        m.w = None
        assert m.w is None and "w" in m._parameters
        with pytest.raises(TypeError, match="cannot assign .* as parameter 'w'"):
            m.w = lib.ones(2)
        m.register_buffer("b", lib.ones(1))
        m.b = lib.zeros(1)
        assert float(m.b[0]) == 0.0
        with pytest.raises(TypeError, match="cannot assign .* as buffer 'b'"):
            m.b = 3
        m.child = lib.nn.Module()
        with pytest.raises(TypeError, match="cannot assign .* as child module 'child'"):
            m.child = 3
        m.child = None
        assert m.child is None
        m.plain = 3
        assert m.plain == 3 and "plain" in m.__dict__
        with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
            m.nope  # noqa: B018
        with pytest.raises(KeyError, match="attribute 'plain' already exists"):
            m.register_buffer("plain", None)
        with pytest.raises(KeyError, match="contain"):
            m.register_parameter("a.b", None)
        with pytest.raises(KeyError, match="be empty string"):
            m.add_module("", None)
        with pytest.raises(TypeError, match="is not a Module subclass"):
            m.add_module("x", 3)
        with pytest.raises(TypeError, match="cannot assign"):
            m.register_parameter("q", lib.ones(1))
        del m.w
        assert "w" not in m._parameters
        del m.plain
        assert not hasattr(m, "plain")


def test_register_before_init_raises() -> None:
    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(ember.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_non_leaf_parameter_is_rejected() -> None:
    base = nn.Parameter(ember.ones(1))
    derived = base * 2
    non_leaf = nn.Parameter(ember.ones(1))
    non_leaf.grad_fn = derived.grad_fn  # a Parameter that is the result of an op
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor"):
        nn.Module().register_parameter("p", non_leaf)


def test_non_persistent_buffer_is_not_in_state_dict() -> None:
    m = nn.Module()
    m.register_buffer("keep", ember.ones(1))
    m.register_buffer("drop", ember.ones(1), persistent=False)
    assert list(m.state_dict()) == ["keep"]
    assert [n for n, _ in m.named_buffers()] == ["keep", "drop"]


def test_train_eval_apply_requires_grad_zero_grad() -> None:
    model = make_model(ember)
    assert model.training
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    with pytest.raises(ValueError, match="boolean"):
        model.train("yes")
    seen = []
    model.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen[0] == "Affine"
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())
    model.requires_grad_()
    for p in model.parameters():
        p.grad = ember.ones(p.shape)
    model.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_to_dtype_keeps_parameter_identity_and_skips_integer_buffers() -> None:
    model = make_model(ember)
    weight = model.inp.weight
    assert model.double() is model
    assert model.inp.weight is weight and weight.dtype == ember.float64
    assert isinstance(weight, nn.Parameter) and weight.requires_grad
    assert model.steps.dtype == ember.int64
    assert model.blocks[0].scale.factor.dtype == ember.float64
    model.to(ember.float32)
    assert weight.dtype == ember.float32
    model.to("cpu")
    model.to(device="cpu", dtype=ember.float64)
    assert weight.dtype == ember.float64
    model.float()
    with pytest.raises(TypeError, match="floating point or complex"):
        model.to(ember.int32)


def test_forward_hooks_and_handles_match_torch() -> None:
    calls = {}
    for lib in (ember, torch):
        log = calls.setdefault(lib.__name__, [])
        m = make_model(lib).inp
        h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
        h2 = m.register_forward_hook(lambda mod, args, out: out + 1)
        h3 = m.register_forward_hook(
            lambda mod, args, out, log=log: log.append("first"), prepend=True
        )
        h4 = m.register_forward_pre_hook(lambda mod, args, kwargs: (args, kwargs), with_kwargs=True)
        h5 = m.register_forward_hook(
            lambda mod, args, kwargs, out, log=log: log.append(sorted(kwargs)), with_kwargs=True
        )
        out = m(lib.ones(1, 3))
        log.append(_np(out).round(4).tolist())
        for h in (h1, h2, h3, h4, h5):
            h.remove()
        log.append(_np(m(lib.zeros(1, 3))).round(4).tolist())
    assert calls["ember"] == calls["torch"]


def test_forward_missing_raises() -> None:
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(ember.ones(1))


def test_dir_lists_registered_names() -> None:
    model = make_model(ember)
    names = dir(model)
    assert {"inp", "blocks", "steps", "forward", "training"} <= set(names)
    assert "0" not in dir(model.blocks)


def test_parameter_repr_deepcopy_and_sharing() -> None:
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    tp = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == repr(tp)
    assert repr(nn.Parameter(ember.ones(1), requires_grad=False)) == repr(
        torch.nn.Parameter(torch.ones(1), requires_grad=False)
    )
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q is not p
    assert q.tolist() == p.tolist()
    base = ember.zeros(2)
    shared = nn.Parameter(base)
    base.add_(1)
    assert shared.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="floating point and complex"):
        nn.Parameter(ember.tensor([1, 2]))
    assert not nn.Parameter(ember.tensor([1, 2]), requires_grad=False).requires_grad


def test_deepcopy_module_copies_weights_and_keeps_ties() -> None:
    model = make_model(ember)
    model.tied = model.inp  # the same module twice
    clone = copy.deepcopy(model)
    assert clone.tied is clone.inp and clone.inp is not model.inp
    assert type(clone.inp.weight) is nn.Parameter
    np.testing.assert_array_equal(_np(clone.inp.weight), _np(model.inp.weight))


# --------------------------------------------------------------------------- containers


def test_sequential_indexing_slicing_and_mutation_match_torch() -> None:
    results = {}
    for lib in (ember, torch):
        mods = [lib.nn.Module() for _ in range(4)]
        seq = lib.nn.Sequential(*mods)
        r = results.setdefault(lib.__name__, [])
        r.append(len(seq))
        r.append(seq[-1] is mods[3])
        sub = seq[1:3]
        r.append((type(sub).__name__, list(sub._modules), sub[0] is mods[1]))
        r.append([m is x for m, x in zip(seq, mods, strict=True)])
        seq.append(lib.nn.Module())
        del seq[0]
        r.append(list(seq._modules))
        seq[0] = mods[0]
        r.append(seq[0] is mods[0])
        with pytest.raises(IndexError):
            seq[10]
        named = lib.nn.Sequential(OrderedDict([("first", mods[0]), ("second", mods[1])]))
        r.append(list(named._modules))
        r.append(repr(named))
    assert results["ember"] == results["torch"]


def test_sequential_forward_chains() -> None:
    model = make_model(ember)
    x = ember.ones(1, 4)
    np.testing.assert_array_equal(_np(model.seq(x)), np.full((1, 4), 4.0, np.float32))


def test_modulelist_and_moduledict_match_torch() -> None:
    results = {}
    for lib in (ember, torch):
        r = results.setdefault(lib.__name__, [])
        a, b, c = lib.nn.Module(), lib.nn.Module(), lib.nn.Module()
        ml = lib.nn.ModuleList([a, b])
        ml.append(c)
        ml += [lib.nn.Module()]
        r.append((len(ml), ml[-2] is c, [m is x for m, x in zip(ml, [a, b, c], strict=False)]))
        r.append(type(ml[1:]).__name__)
        ml.insert(0, c)
        del ml[1]
        r.append((list(ml._modules), ml[0] is c, ml[1] is b))
        r.append(repr(ml))
        md = lib.nn.ModuleDict({"x": a})
        md["y"] = b
        md.update([("z", c)])
        r.append((list(md), list(md.keys()), "y" in md, len(md), md["z"] is c))
        r.append(md.pop("x") is a)
        r.append(repr(md))
    assert results["ember"] == results["torch"]


def test_modulelist_repr_groups_repeats_like_torch() -> None:
    for_lib = {}
    for lib in (ember, torch):
        blocks = [make_model(lib).inp for _ in range(3)] + [make_model(lib).blocks[0]]
        for_lib[lib.__name__] = repr(lib.nn.ModuleList(blocks))
    assert for_lib["ember"] == for_lib["torch"]


def test_parameterlist_and_parameterdict() -> None:
    pl = nn.ParameterList([ember.ones(2), nn.Parameter(ember.zeros(3, 2))])
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    pl.append(ember.ones(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    text = repr(nn.ParameterList([nn.Parameter(ember.zeros(2, 3)), nn.Parameter(ember.zeros(2))]))
    theirs = repr(
        torch.nn.ParameterList(
            [torch.nn.Parameter(torch.zeros(2, 3)), torch.nn.Parameter(torch.zeros(2))]
        )
    )
    assert text == theirs.replace("torch.", "ember.")
    pd = nn.ParameterDict({"a": ember.ones(2)})
    pd["b"] = nn.Parameter(ember.zeros(1))
    assert list(pd.keys()) == ["a", "b"] and isinstance(pd["a"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["a", "b"]
    del pd["a"]
    assert list(pd) == ["b"] and len(pd) == 1


# --------------------------------------------------------------------------- init


def test_init_bounds_and_statistics() -> None:
    ember.manual_seed(0)
    w = ember.empty(200, 300)
    fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(w)
    assert (fan_in, fan_out) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(200, 300))
    nn.init.kaiming_uniform_(w, a=5**0.5)
    bound = 1 / fan_in**0.5
    arr = w.numpy()
    assert (
        arr.min() >= -bound
        and arr.max() < bound
        and arr.std() == pytest.approx(bound / 3**0.5, rel=0.02)
    )
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert w.numpy().std() == pytest.approx((2 / fan_out) ** 0.5, rel=0.02)
    nn.init.xavier_uniform_(w, gain=2.0)
    a = 2.0 * (6 / (fan_in + fan_out)) ** 0.5
    assert np.abs(w.numpy()).max() <= a and w.numpy().std() == pytest.approx(a / 3**0.5, rel=0.02)
    nn.init.xavier_normal_(w)
    assert w.numpy().std() == pytest.approx((2 / (fan_in + fan_out)) ** 0.5, rel=0.02)
    nn.init.normal_(w, mean=3.0, std=0.5)
    assert w.numpy().mean() == pytest.approx(3.0, abs=0.01)
    nn.init.uniform_(w, -2, -1)
    assert w.numpy().min() >= -2 and w.numpy().max() < -1
    assert nn.init.constant_(w, 0.25).numpy().max() == 0.25
    assert nn.init.zeros_(w).numpy().max() == 0 and nn.init.ones_(w).numpy().min() == 1


def test_init_is_deterministic_under_seed_and_generator() -> None:
    ember.manual_seed(3)
    a = nn.init.kaiming_uniform_(ember.empty(4, 5)).numpy().copy()
    ember.manual_seed(3)
    b = nn.init.kaiming_uniform_(ember.empty(4, 5)).numpy().copy()
    np.testing.assert_array_equal(a, b)
    g1, g2 = ember.Generator().manual_seed(7), ember.Generator().manual_seed(7)
    np.testing.assert_array_equal(
        nn.init.normal_(ember.empty(3), generator=g1).numpy(),
        nn.init.normal_(ember.empty(3), generator=g2).numpy(),
    )


def test_init_on_parameter_keeps_it_a_leaf_and_dtype() -> None:
    p = nn.Parameter(ember.empty(3, 4, dtype=ember.float64))
    nn.init.xavier_uniform_(p)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None and p.dtype == ember.float64


@pytest.mark.parametrize(
    "args",
    [
        ("linear",),
        ("tanh",),
        ("relu",),
        ("leaky_relu",),
        ("leaky_relu", 0.2),
        ("selu",),
        ("conv2d",),
    ],
)
def test_calculate_gain_matches_torch(args: tuple) -> None:
    assert nn.init.calculate_gain(*args) == pytest.approx(torch.nn.init.calculate_gain(*args))


def test_init_errors_match_torch() -> None:
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="Unsupported nonlinearity"):
            lib.nn.init.calculate_gain("swish")
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            lib.nn.init.xavier_uniform_(lib.empty(3))
        with pytest.raises(ValueError, match="Mode fan_avg not supported"):
            lib.nn.init.kaiming_uniform_(lib.empty(3, 3), mode="fan_avg")
