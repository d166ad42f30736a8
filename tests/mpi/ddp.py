"""Run under MPI on two ranks: DistributedDataParallel training of the demo's MLP and CNN
for 20 steps, each rank on its half of every batch, equals training one model on the whole
batches in this same process (the reference, computed on every rank), with and without
no_sync accumulation, with several buckets, unused parameters, buffers and ember.compile."""

from __future__ import annotations

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.demo import data, models
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
SPLIT = data.split_digits()
BATCH = 64
STEPS = 20
ORDER = ember.from_numpy(np.random.default_rng(0).permutation(len(SPLIT.train_y)))
checks = 0


def batch(step: int) -> tuple[ember.Tensor, ember.Tensor]:
    idx = ORDER[(step * BATCH) % 1408 :][:BATCH]
    return SPLIT.train_x[idx], SPLIT.train_y[idx]


def mine(t: ember.Tensor) -> ember.Tensor:
    """This rank's share of a batch."""
    n = t.shape[0] // SIZE
    return t[RANK * n : (RANK + 1) * n]


def same(a: nn.Module, b: nn.Module, what: str, rtol: float = 2e-4, atol: float = 2e-5) -> None:
    global checks
    for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        np.testing.assert_allclose(
            p.detach().numpy(), q.detach().numpy(), rtol=rtol, atol=atol, err_msg=f"{what} {name}"
        )
        checks += 1


def build(name: str, seed: int) -> nn.Module:
    ember.manual_seed(seed)
    return models.RECIPES[name].build()


def train_pair(
    name: str,
    accumulate: int = 1,
    compiled: bool = False,
    outer: bool = False,
    **ddp_kwargs: object,
) -> DDP:
    recipe = models.RECIPES[name]
    ref = build(name, 0)
    local = build(name, 0 if RANK == 0 else 99)  # DDP's broadcast makes rank 1 start equal
    ddp = DDP(ember.compile(local) if compiled else local, **ddp_kwargs)
    run = ember.compile(ddp) if outer else ddp
    same(ref, local, f"{name} after construction")
    ref_opt, opt = recipe.optimizer(ref.parameters()), recipe.optimizer(ddp.parameters())
    loss_fn = nn.CrossEntropyLoss()
    for step in range(STEPS):
        ref_opt.zero_grad()
        opt.zero_grad()
        for micro in range(accumulate):
            x, y = batch(step * accumulate + micro)
            loss_fn(ref(x), y).backward()
            if micro < accumulate - 1:
                with ddp.no_sync():
                    loss_fn(run(mine(x)), mine(y)).backward()
            else:
                loss_fn(run(mine(x)), mine(y)).backward()
        ref_opt.step()
        opt.step()
    same(ref, local, f"{name} after {STEPS} steps (accumulate={accumulate})")
    return ddp


ddp = train_pair("mlp")
assert len(ddp._buckets) == 1
train_pair("cnn")
ddp = train_pair("mlp", accumulate=2, bucket_cap_mb=0.02)
assert len(ddp._buckets) >= 2, len(ddp._buckets)
train_pair("cnn", accumulate=2, bucket_cap_mb=0.001)
train_pair("mlp", compiled=True)
train_pair("cnn", accumulate=2, outer=True)  # ember.compile(DDP(cnn))

# every optimizer sees the averaged gradients: a few steps of each, against one process
for make_opt in (
    lambda p: ember.optim.AdamW(p, lr=1e-2),
    lambda p: ember.optim.RMSprop(p, lr=1e-3),
    lambda p: ember.optim.Adagrad(p, lr=1e-2),
    lambda p: ember.optim.SGD(p, lr=0.1, nesterov=True, momentum=0.9, weight_decay=1e-3),
):
    ref, local = build("mlp", 0), build("mlp", 0 if RANK == 0 else 5)
    ddp = DDP(local)
    ref_opt, opt = make_opt(ref.parameters()), make_opt(ddp.parameters())
    for step in range(3):
        x, y = batch(step)
        for o, m, xs, ys in ((ref_opt, ref, x, y), (opt, ddp, mine(x), mine(y))):
            o.zero_grad()
            nn.CrossEntropyLoss()(m(xs), ys).backward()
            o.step()
    same(ref, local, f"{type(opt).__name__} after 3 steps")

# no_sync really skips communication: gradients differ between ranks inside it
ember.manual_seed(0)
m = DDP(models.mlp())
x, y = batch(0)
with m.no_sync():
    nn.CrossEntropyLoss()(m(mine(x)), mine(y)).backward()
g = m.module[1].weight.grad.clone()
every = [ember.empty_like(g) for _ in range(SIZE)]
dist.all_gather(every, g)
assert not ember.equal(every[0], every[1])


# unused parameters: find_unused_parameters=True; a parameter no rank used keeps grad None
class Partly(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.used = nn.Linear(64, 10)
        self.unused = nn.Linear(3, 3)
        self.sometimes = nn.Linear(10, 10)

    def forward(self, x: ember.Tensor, extra: bool) -> ember.Tensor:
        out = self.used(x.flatten(1))
        return self.sometimes(out) if extra else out


ember.manual_seed(0)
ref = Partly()
ember.manual_seed(0)
m = DDP(Partly(), find_unused_parameters=True)
x, y = batch(1)
for extra_on_rank0 in (True, False):
    ref.zero_grad()
    m.zero_grad()
    # the reference: rank 0's half goes through `sometimes` when extra_on_rank0
    half = x.shape[0] // SIZE
    loss = sum(
        nn.CrossEntropyLoss()(ref(x[r * half : (r + 1) * half], extra_on_rank0 and r == 0),
                              y[r * half : (r + 1) * half])
        for r in range(SIZE)
    ) / SIZE  # fmt: skip
    loss.backward()
    nn.CrossEntropyLoss()(m(mine(x), extra_on_rank0 and RANK == 0), mine(y)).backward()
    assert m.module.unused.weight.grad is None
    for name in ("used", "sometimes"):
        for pn in ("weight", "bias"):
            want = getattr(getattr(ref, name), pn).grad
            got = getattr(getattr(m.module, name), pn).grad
            if want is None:
                assert got is None, name
            else:
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
                checks += 1

# without find_unused_parameters, an unused parameter is a clear error
ember.manual_seed(0)
m = DDP(Partly())
try:
    nn.CrossEntropyLoss()(m(mine(x), False), mine(y)).backward()
except RuntimeError as e:
    assert "find_unused_parameters=True" in str(e) and "unused.weight" in str(e), e
else:
    raise AssertionError("no error for a parameter without gradient")

# buffers: rank 0's running statistics are broadcast at each forward
ember.manual_seed(RANK)
bn = DDP(nn.Sequential(nn.Flatten(), nn.Linear(64, 8), nn.BatchNorm1d(8)))
for step in range(3):  # each rank updates the statistics with its own half
    bn(mine(batch(step)[0])).sum().backward()
stats = bn.module[2].running_mean.clone()
every = [ember.empty_like(stats) for _ in range(SIZE)]
dist.all_gather(every, stats)
assert not ember.equal(every[0], every[1])
bn.eval()
bn(mine(batch(3)[0]))  # broadcasts rank 0's statistics (and, in eval mode, keeps them)
dist.all_gather(every, bn.module[2].running_mean)
assert ember.equal(every[0], every[1]) and ember.equal(every[0], stats if RANK == 0 else every[0])
checks += 1

# the sampler gives each rank a disjoint share, together the whole dataset
from ember.utils.data.distributed import DistributedSampler  # noqa: E402

sampler = DistributedSampler(range(101), shuffle=False)  # shuffled: tests/test_distributed.py
sampler.set_epoch(2)
shares: list = [None] * SIZE
dist.all_gather_object(shares, list(sampler))
union = sorted(i for s in shares for i in s)
assert len(shares[0]) == len(sampler) == 51 and set(union) == set(range(101)), union
dist.destroy_process_group()
if RANK == 0:
    print(f"ddp OK: {checks} checks")
