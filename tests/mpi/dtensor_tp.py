"""Tensor-parallel training as one MPI job (tests/test_dtensor.py launches it): an MLP and an
attention block parallelized with ColwiseParallel/RowwiseParallel train for a few SGD steps to
the losses and weights of the same dense modules; a compiled function on DTensors equals the
eager one. Prints one OK line."""

from __future__ import annotations

import copy
import math
import warnings

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.aot import aot_function
from ember.distributed.tensor import (
    DTensor,
    Replicate,
    Shard,
    distribute_module,
    distribute_tensor,
    init_device_mesh,
)
from ember.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from tests.mpi._dtensor_job import RNG, randn, rank, world

warnings.simplefilter("error")  # a rule that falls back to replicating is a failure here
mesh = init_device_mesh("cpu", (world,))


class MLP(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class Attention(nn.Module):
    """q/k/v/o attention as PyTorch's tensor-parallel tutorial writes it: the head count is an
    attribute the parallel version divides by the mesh size."""

    def __init__(self, dim: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wq, self.wk, self.wv = (nn.Linear(dim, dim, bias=False) for _ in range(3))
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        b, s, _ = x.shape
        q, k, v = (w(x).view(b, s, -1, self.head_dim).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))  # fmt: skip
        att = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, -1)
        return self.wo(y)


class Block(nn.Module):
    def __init__(self, dim: int, n_heads: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, n_heads)
        self.mlp = MLP(dim, 4 * dim)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def full(p: ember.Tensor) -> ember.Tensor:
    return p.full_tensor() if isinstance(p, DTensor) else p


def train(model: nn.Module, xs: list, ys: list, foreach: bool, steps: int = 4) -> list[float]:
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=foreach)
    losses = []
    for x, y in zip(xs[:steps], ys[:steps], strict=True):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


def check_same(
    dense: nn.Module, tp: nn.Module, xs: list, ys: list, what: str, foreach: bool = False
) -> None:
    ld, lt = train(dense, xs, ys, foreach), train(tp, xs, ys, foreach)
    assert all(abs(a - b) < 1e-4 * max(1.0, abs(a)) for a, b in zip(ld, lt, strict=True)), (
        f"{what}: losses {ld} vs {lt}"
    )
    assert ld[-1] < ld[0], f"{what}: the loss did not fall: {ld}"
    for (n, p), (_, q) in zip(dense.named_parameters(), tp.named_parameters(), strict=True):
        assert ember.allclose(p, full(q.detach()), atol=1e-4), f"{what}: parameter {n} differs"


# ---------------------------------------------------------------- MLP
dense = MLP(8, 16)
tp = parallelize_module(
    copy.deepcopy(dense), mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()}
)
assert isinstance(tp.fc1.weight, DTensor) and tp.fc1.weight.placements == (Shard(0),)
assert tp.fc2.weight.placements == (Shard(1),) and tp.fc2.bias.placements == (Replicate(),)
assert tuple(tp.fc1.weight.to_local().shape) == (16 // world, 8)
xs, ys = [randn(4, 8)] * 4, [randn(4, 8)] * 4  # one batch: the loss must fall
check_same(dense, tp, xs, ys, "TP MLP")
# gradients are DTensors laid out as their parameters
for name, p in tp.named_parameters():
    assert isinstance(p.grad, DTensor) and p.grad.placements == p.placements, (name, p.grad)

# ---------------------------------------------------------------- attention block
dense = Block(8, 4)
tp = copy.deepcopy(dense)
plan_block = plan = {
    "attn.wq": ColwiseParallel(),
    "attn.wk": ColwiseParallel(),
    "attn.wv": ColwiseParallel(),
    "attn.wo": RowwiseParallel(),
    "mlp.fc1": ColwiseParallel(),
    "mlp.fc2": RowwiseParallel(),
}
parallelize_module(tp, mesh, plan)
tp.attn.n_heads //= world
xs, ys = [randn(2, 5, 8)] * 4, [randn(2, 5, 8)] * 4
check_same(dense, tp, xs, ys, "TP attention block", foreach=True)  # _foreach_* ops too


# ---------------------------------------------------------------- a tiny language model
class TinyLM(nn.Module):
    def __init__(self, vocab: int, dim: int) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.block = Block(dim, 4)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx: ember.Tensor) -> ember.Tensor:
        return self.head(self.block(self.tok(idx)))


def train_lm(model: nn.Module, idx: ember.Tensor, tgt: ember.Tensor) -> list[float]:
    opt = ember.optim.AdamW(model.parameters(), lr=0.05, foreach=True)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(idx).reshape(-1, 11), tgt.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


dense = TinyLM(11, 8)
tp = copy.deepcopy(dense)
plan = {"tok": RowwiseParallel(), "head": ColwiseParallel(output_layouts=Replicate())}
plan.update({f"block.{k}": v for k, v in plan_block.items()})
parallelize_module(tp, mesh, plan)
tp.block.attn.n_heads //= world
assert tp.tok.weight.placements == (Shard(0),)  # vocab-parallel: rows looked up where they lie
idx = ember.tensor(RNG.integers(0, 11, (2, 5)))
tgt = ember.tensor(RNG.integers(0, 11, (2, 5)))
ld, lt = train_lm(dense, idx, tgt), train_lm(tp, idx, tgt)
assert all(abs(a - b) < 1e-4 for a, b in zip(ld, lt, strict=True)), f"TP LM: {ld} vs {lt}"
assert ld[-1] < ld[0], ld
assert ember.allclose(tp.tok.weight.full_tensor(), dense.tok.weight, atol=1e-5)

# ---------------------------------------------------------------- DTensor all the way through
# an MLP on batch-sharded DTensors with replicated weights (data parallel by hand)
dense = MLP(8, 16)
dt = copy.deepcopy(dense)
for mod in (dt.fc1, dt.fc2):
    for name in ("weight", "bias"):
        p = getattr(mod, name)
        mod.register_parameter(
            name, nn.Parameter(distribute_tensor(p.detach(), mesh, [Replicate()]))
        )
x, y = randn(6, 8), randn(6, 8)
loss_d = F.mse_loss(dense(x), y)
loss_d.backward()
dx, dy = distribute_tensor(x, mesh, [Shard(0)]), distribute_tensor(y, mesh, [Shard(0)])
loss_t = F.mse_loss(dt(dx), dy)
loss_t.backward()
assert ember.allclose(loss_t.full_tensor(), loss_d, atol=1e-5), (loss_t, loss_d)
for (n, p), (_, q) in zip(dense.named_parameters(), dt.named_parameters(), strict=True):
    assert isinstance(q.grad, DTensor), n
    assert ember.allclose(q.grad.full_tensor(), p.grad, atol=1e-5), f"grad of {n}"


# ---------------------------------------------------------------- distribute_module
def shard_fc1(name: str, mod: nn.Module, m: object) -> None:
    if name == "fc1":
        for pname in ("weight", "bias"):
            p = getattr(mod, pname)
            mod.register_parameter(
                pname, nn.Parameter(distribute_tensor(p.detach(), m, [Shard(0)]))
            )


dense = MLP(8, 16)
dm = distribute_module(
    copy.deepcopy(dense),
    mesh,
    shard_fc1,
    input_fn=lambda mod, inputs, m: tuple(distribute_tensor(t, m, [Replicate()]) for t in inputs),
    output_fn=lambda mod, out, m: out.full_tensor(),
)
assert dm.fc1.weight.placements == (Shard(0),) and dm.fc2.weight.placements == (Replicate(),)
x = randn(3, 8)
assert ember.allclose(dm(x), dense(x), atol=1e-5)


# ---------------------------------------------------------------- compiled
def f(a: ember.Tensor, w: ember.Tensor) -> ember.Tensor:
    return F.gelu(a @ w).sum(1) * 2


a, w = randn(6, 4), randn(4, 5)
da, dw = distribute_tensor(a, mesh, [Shard(0)]), distribute_tensor(w, mesh, [Replicate()])
eager = f(da, dw)
compiled = ember.compile(f)(da, dw)
assert isinstance(compiled, DTensor) and compiled.placements == eager.placements
assert ember.allclose(compiled.full_tensor(), eager.full_tensor(), atol=1e-5)
assert ember.allclose(compiled.full_tensor(), f(a, w), atol=1e-5)

# a compiled TP module trains as the dense one; its forward graph holds the all-reduce
dense = MLP(8, 16)
ctp = ember.compile(
    parallelize_module(
        copy.deepcopy(dense), mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()}
    )
)
xs, ys = [randn(4, 8)] * 3, [randn(4, 8)] * 3
ld, lc = train(dense, xs, ys, False, 3), train(ctp, xs, ys, False, 3)
assert all(abs(a - b) < 1e-4 for a, b in zip(ld, lc, strict=True)), (ld, lc)
assert not ctp._compiled.graph_breaks, ctp._compiled.graph_breaks
fw = [str(n.target) for n in ctp._compiled.impl.graphs[0]["forward"].graph.nodes]
assert world == 1 or "_c10d_functional.all_reduce.default" in fw, fw

# a trace that communicates records the functional collectives as graph nodes
graphs = []


def keep(gm: object, inputs: object) -> object:
    graphs.append(gm)
    return gm


ws = distribute_tensor(w, mesh, [Shard(0)])
g = aot_function(lambda a, w: (a @ w).redistribute(mesh, [Replicate()]) * 2, keep)
out = g(distribute_tensor(a, mesh, [Shard(1)]), ws)
assert out.placements == (Replicate(),)
assert ember.allclose(out.full_tensor(), a @ w * 2, atol=1e-5)
targets = [str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"]
want = "_c10d_functional.all_reduce" if world > 1 else "aten.mm"
assert any(want in t for t in targets), targets

print(f"rank {rank}: dtensor tp OK")
