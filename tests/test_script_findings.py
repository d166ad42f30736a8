"""What the ``tests/scripts/`` scripts found missing or different in ember, each checked
against PyTorch: ``msort``, ``once_differentiable``, ``Module._register_state_dict_hook``,
``autograd.graph.saved_tensors_hooks`` (and ``disable_saved_tensors_hooks``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

LIBS = [ember, torch] if torch is not None else [ember]


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().tolist())


@requires_torch
def test_msort_is_sort_along_dim_0_with_its_gradient() -> None:
    data = np.random.default_rng(0).standard_normal((4, 3))
    res = []
    for lib in (ember, torch):
        x = lib.tensor(data, requires_grad=True)
        y = lib.msort(x)
        (y * lib.arange(4.0, dtype=lib.float64)[:, None]).sum().backward()
        res.append((_np(y), _np(x.grad), _np(x.detach().msort())))
    for a, b in zip(*res, strict=True):
        np.testing.assert_allclose(a, b)


def _once(lib: Any) -> Any:
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return Square


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_once_differentiable_gives_a_gradient_once_and_refuses_a_second(lib: Any) -> None:
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    (g,) = lib.autograd.grad(_once(lib).apply(x).sum(), x)
    assert g.tolist() == [2.0, -4.0] and not g.requires_grad
    v = lib.ones(2, requires_grad=True)  # a gradient that requires grad: a graph is wanted
    (g,) = lib.autograd.grad(_once(lib).apply(x), x, grad_outputs=v, create_graph=True)
    assert g.requires_grad and g.tolist() == [2.0, -4.0]  # through a node that raises
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked"):
        g.sum().backward()


@requires_torch
def test_private_state_dict_hook_may_return_a_new_state_dict() -> None:
    keys = []
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2))
        m[0]._register_state_dict_hook(lambda mod, sd, prefix, md: sd.__setitem__("x", 1))
        m._register_state_dict_hook(lambda mod, sd, prefix, md: {"only": len(sd)})
        keys.append(dict(m.state_dict()))
        with pytest.raises(RuntimeError, match="must return None"):
            m.register_state_dict_post_hook(lambda mod, sd, p, md: {})
            m.state_dict()
    assert keys[0] == keys[1] == {"only": 3}


def _hooked_run(lib: Any) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """sin(z) * z and exp(z) under hooks that pack to NumPy and unpack scaled by 2."""
    packed: list[Any] = []

    def pack(t: Any) -> Any:
        packed.append(tuple(t.shape))
        return t.detach().numpy().copy()

    z = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.float64, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda a: lib.from_numpy(a * 2)):
        loss = (z.sin() * z).sum() + z.exp().sum() + _once(lib).apply(z).sum()
    loss.backward()
    return sorted(packed), _np(z.grad), _np(loss)


@requires_torch
def test_saved_tensors_hooks_pack_every_saved_tensor_and_backward_reads_unpack() -> None:
    ours, theirs = _hooked_run(ember), _hooked_run(torch)
    assert ours[0] == theirs[0]  # sin's input, mul's two, exp's output, Square's input
    np.testing.assert_allclose(ours[1], theirs[1])  # computed from the doubled values
    np.testing.assert_allclose(ours[2], theirs[2])


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_disable_saved_tensors_hooks_refuses_hooks(lib: Any) -> None:
    graph = lib.autograd.graph
    with graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    x = lib.ones(2, requires_grad=True)
    with graph.save_on_cpu():
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def _draws(lib: Any) -> list[Any]:
    """Integer draws of every kind from one seeded generator, in order."""
    g = lib.Generator().manual_seed(11)
    out = []
    for d in (lib.int64, lib.int32, lib.int8, lib.uint8, lib.float32, lib.float64, lib.bool):
        out.append(lib.empty(5, dtype=d).random_(generator=g).tolist())
    out.append(lib.empty(3, dtype=lib.int16).random_(-3, 100, generator=g).tolist())
    out.append(lib.empty(3, dtype=lib.int64).random_(7, generator=g).tolist())
    out.append(lib.empty(3, dtype=lib.int64).random_(-(2**63), None, generator=g).tolist())
    out.append(lib.empty(3, dtype=lib.int64).random_(-(2**40), 2**41, generator=g).tolist())
    out.append(lib.randint(-(2**35), 2**35, (4,), generator=g).tolist())
    out.append(lib.randint(0, 10, (2, 3), dtype=lib.float32, generator=g).tolist())
    out.append(lib.randperm(9, generator=g).tolist())
    return out


@requires_torch
def test_random_and_randint_draw_pytorchs_numbers() -> None:
    """random_ (every dtype's default range, from/to, the full int64 range) and randint
    give PyTorch's numbers bit for bit from the same seed (its 32- and 64-bit draws)."""
    assert _draws(ember) == _draws(torch)


def _loader_passes(lib: Any, workers: int) -> list[Any]:
    data = lib.utils.data
    g = lib.Generator().manual_seed(2)
    dl = data.DataLoader(list(range(20)), batch_size=5, shuffle=True, generator=g,
                         num_workers=workers)  # fmt: skip
    passes = [[b.tolist() for b in dl] for _ in range(3)]
    split = data.random_split(range(10), [7, 3], generator=lib.Generator().manual_seed(4))
    sampler = data.RandomSampler(range(6), replacement=True, num_samples=40,
                                 generator=lib.Generator().manual_seed(3))  # fmt: skip
    sub = data.SubsetRandomSampler([10, 20, 30, 40], generator=lib.Generator().manual_seed(5))
    return [passes, [list(s) for s in split], list(sampler), list(sub), list(sub)]


@requires_torch
def test_shuffled_loaders_and_splits_give_pytorchs_order() -> None:
    """A seeded DataLoader's batches, pass after pass, with and without workers (its base
    seed drawn per pass first, a discarded permutation when the sample count is a multiple
    of the length), random_split and the random samplers give PyTorch's indices."""
    theirs = _loader_passes(torch, 0)
    assert _loader_passes(ember, 0) == theirs
    assert _loader_passes(ember, 2)[0] == theirs[0]


@requires_torch
def test_training_checkpoint_resumes_across_libraries(tmp_path: Any) -> None:
    """A checkpoint (model, Adam, scheduler) torch.save-d resumes in ember with PyTorch's
    next step, and ember's checkpoint of that loads back in torch (weights_only)."""

    def setup(lib: Any) -> tuple[Any, Any, Any]:
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.Flatten(), lib.nn.Linear(8, 2))
        opt = lib.optim.Adam(m.parameters(), lr=0.05)
        return m, opt, lib.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

    x = np.random.default_rng(0).standard_normal((3, 1, 4, 4)).astype(np.float32)

    def step(lib: Any, m: Any, opt: Any, sched: Any) -> None:
        opt.zero_grad()
        m(lib.from_numpy(x)).pow(2).mean().backward()
        opt.step()
        sched.step()

    tm, topt, tsched = setup(torch)
    step(torch, tm, topt, tsched)
    path = tmp_path / "ckpt.pt"
    torch.save({"model": tm.state_dict(), "opt": topt.state_dict(),
                "sched": tsched.state_dict(), "epoch": 1}, path)  # fmt: skip
    ck = ember.load(path)
    em, eopt, esched = setup(ember)
    em.load_state_dict(ck["model"])
    eopt.load_state_dict(ck["opt"])
    esched.load_state_dict(ck["sched"])
    assert ck["epoch"] == 1 and esched.get_last_lr() == tsched.get_last_lr()
    step(torch, tm, topt, tsched)
    step(ember, em, eopt, esched)
    for (k, a), b in zip(tm.state_dict().items(), em.state_dict().values(), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    back = tmp_path / "back.pt"
    ember.save({"model": em.state_dict(), "opt": eopt.state_dict()}, back)
    loaded = torch.load(back, weights_only=True)
    tm2, topt2, _ = setup(torch)
    tm2.load_state_dict(loaded["model"])
    topt2.load_state_dict(loaded["opt"])
    assert topt2.state_dict()["state"][0]["step"].item() == 2
    for a, b in zip(tm2.parameters(), em.parameters(), strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _sgd_step_ops(lib: Any, mode_base: type) -> dict[str, int]:
    from collections import Counter

    class Count(mode_base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.n: Counter[str] = Counter()

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kw: Any = None) -> Any:
            self.n[str(func).split("aten.")[-1]] += 1
            return func(*args, **(kw or {}))

    p = lib.nn.Parameter(lib.ones(3))
    p.grad = lib.full((3,), 0.5)
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    with Count() as mode:
        opt.step()
    return {k: v for k, v in mode.n.items() if "record_function" not in k}


@requires_torch
def test_sgd_momentum_first_step_dispatches_pytorchs_ops() -> None:
    """The first momentum buffer is ``grad.detach().clone()``, as PyTorch's (a counting
    dispatch mode sees the detach)."""
    ours = _sgd_step_ops(ember, ember.utils._python_dispatch.TorchDispatchMode)
    theirs = _sgd_step_ops(torch, torch.utils._python_dispatch.TorchDispatchMode)
    assert ours == theirs and ours["detach.default"] == 1
