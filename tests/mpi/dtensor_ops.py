"""DTensor checks run as one MPI job (tests/test_dtensor.py launches 2 ranks; any number works):
every redistribute pair, uneven pieces, ops on every placement against the dense ops (values and
gradients), the replicate fallback and from_local's checks. Prints one OK line."""

from __future__ import annotations

import itertools
import warnings

import ember
import ember.distributed as dist
import ember.nn.functional as F
from ember.distributed.tensor import (
    DTensor,
    Partial,
    Replicate,
    Shard,
    distribute_tensor,
    init_device_mesh,
)
from ember.distributed.tensor.experimental import implicit_replication
from tests.mpi._dtensor_job import CHECKS, close, randn, rank, world

warnings.simplefilter("error")  # a rule that falls back to replicating is a failure here
mesh = init_device_mesh("cpu", (dist.get_world_size(),))


def partial_of(x: ember.Tensor, m=mesh) -> DTensor:
    """A Partial(sum) DTensor whose parts differ per rank and sum to ``x``."""
    share = (rank + 1) / (world * (world + 1) / 2)
    return DTensor.from_local(x * share, m, [Partial()], shape=x.shape, stride=x.stride())


def layouts(x: ember.Tensor, partial: bool = True) -> list:
    out = [Shard(d) for d in range(x.ndim)] + [Replicate()]
    return out + ([Partial()] if partial else [])


def make(x: ember.Tensor, p, grad: bool) -> DTensor:
    if isinstance(p, Partial):
        return partial_of(x)
    return distribute_tensor(x.detach().clone().requires_grad_(grad), mesh, [p])


def check_op(name, fn, *inputs, grad=True, partial=True, tol=1e-4):
    """``fn`` on DTensors of every combination of layouts equals ``fn`` on the dense inputs,
    and so do the gradients of the inputs that are not Partial."""
    dense = [x.detach().clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    ref = fn(*dense)
    refs = ref if isinstance(ref, tuple) else (ref,)
    cot = [randn(r.shape) for r in refs]
    if grad:
        sum((r * c).sum() for r, c in zip(refs, cot, strict=True)).backward()
    opts = [layouts(x, partial and x.is_floating_point()) if x.ndim else [Replicate()]
            for x in inputs]  # fmt: skip
    for combo in itertools.product(*opts):
        tag = f"{name}{tuple(str(p) for p in combo)}"
        ds = [
            make(x, p, grad and x.is_floating_point()) for x, p in zip(inputs, combo, strict=True)
        ]
        out = fn(*ds)
        outs = out if isinstance(out, tuple) else (out,)
        fulls = [o.full_tensor() for o in outs]
        for f, r in zip(fulls, refs, strict=True):
            close(f.detach(), r.detach(), tag, tol)
        if grad and any(d.requires_grad for d in ds):
            sum((f * c).sum() for f, c in zip(fulls, cot, strict=True)).backward()
            for x, d, p in zip(dense, ds, combo, strict=True):
                if x.requires_grad and not isinstance(p, Partial):
                    assert isinstance(d.grad, DTensor), f"{tag}: grad {type(d.grad)}"
                    close(d.grad.full_tensor(), x.grad, tag + " grad", tol)


# ---------------------------------------------------------------- redistribute, every pair
for shape in [(5, 6), (1, 3), (world * 2, 3)]:
    x = randn(*shape)
    for a, b in itertools.product(layouts(x), layouts(x)):
        if isinstance(b, Partial) and not isinstance(a, Partial):
            continue  # Partial comes only from ops (redistribute refuses it, as PyTorch)
        d = make(x, a, False)
        e = d.redistribute(mesh, [b])
        assert e.placements == (b,)
        close(e.full_tensor(), x, f"redistribute {a} -> {b} of {shape}")
        if not isinstance(b, Partial):
            want = distribute_tensor(x, mesh, [b]).to_local()
            close(e.to_local(), want, f"local piece {a} -> {b}")
# uneven pieces are torch.chunk's
x = ember.arange(5.0)
loc = distribute_tensor(x, mesh, [Shard(0)]).to_local()
chunks = list(x.chunk(world)) + [x[:0]] * world
close(loc, chunks[rank], "torch.chunk pieces")
# a redistribute is differentiable
x = randn(4, 3).requires_grad_()
d = distribute_tensor(x, mesh, [Shard(0)])  # a new leaf, as PyTorch's
assert d.is_leaf and d.requires_grad
(d.redistribute(mesh, [Shard(1)]).full_tensor() * 3).sum().backward()
assert d.grad.placements == (Shard(0),)
close(d.grad.full_tensor(), ember.full((4, 3), 3.0), "redistribute backward")

# ---------------------------------------------------------------- from_local
x = randn(3, 4)
d = DTensor.from_local(x[rank % 3 : rank % 3 + 1], mesh, [Shard(0)])
assert tuple(d.shape) == (world, 4), d.shape
if world == 2:  # uneven pieces need shape=; run_check finds out
    piece = x[:2] if rank == 0 else x[2:]  # torch.chunk's pieces of 3 rows
    try:
        DTensor.from_local(piece, mesh, [Shard(0)], run_check=True)
        raise AssertionError("uneven pieces without shape= were accepted")
    except ValueError as e:
        assert "pass shape=" in str(e), e
    d = DTensor.from_local(piece, mesh, [Shard(0)], shape=(3, 4), stride=(4, 1))
    close(d.full_tensor(), x, "from_local of uneven pieces with shape=")
d = DTensor.from_local(x + rank, mesh, [Replicate()], run_check=True)
close(d.to_local(), x, "run_check broadcasts rank 0's piece")
d = DTensor.from_local(
    ember.ones(2, 2), mesh, [Shard(1)], shape=(2, 2 * world), stride=(2 * world, 1)
)
assert tuple(d.shape) == (2, 2 * world) and d.stride() == (2 * world, 1)
try:
    DTensor.from_local(ember.ones(2), mesh, [Shard(3)])
    raise AssertionError("Shard(3) of a 1-d tensor was accepted")
except IndexError as e:
    assert "Shard(dim=3)" in str(e)
local = randn(2, 3).requires_grad_()
(DTensor.from_local(local, mesh, [Shard(0)]) * 2).sum().backward()
close(local.grad, ember.full((2, 3), 2.0), "from_local backward")

# ---------------------------------------------------------------- ops on every placement
a, b = randn(5, 4), randn(5, 4)
check_op("exp", lambda x: x.exp(), a)
check_op("relu+neg", lambda x: -F.relu(x), a)
check_op("gelu", lambda x: F.gelu(x), a)
check_op("add", lambda x, y: x + y, a, b)
check_op("mul", lambda x, y: x * y, a, b)
check_op("div scalar", lambda x: x / 3.0 - x * 2, a)
check_op("broadcast row", lambda x, y: x * y + y, a, randn(4))
check_op("broadcast col", lambda x, y: x - y, a, randn(5, 1))
check_op("sum", lambda x: x.sum(), a)
check_op("sum dim", lambda x: x.sum(0), a)
check_op("sum keepdim", lambda x: x.sum(1, keepdim=True), a)
check_op("mean", lambda x: x.mean(), randn(4, 6))
check_op("mean uneven", lambda x: x.mean(0), a)
check_op("amax", lambda x: x.amax(1), a, grad=False)
check_op("mm", lambda x, y: x @ y, a, randn(4, 3))
check_op("bmm", lambda x, y: ember.bmm(x, y), randn(2, 3, 4), randn(2, 4, 5),
         partial=False)  # fmt: skip
check_op("linear", lambda x, w, c: F.linear(x, w, c), a, randn(3, 4), randn(3),
         partial=False)  # fmt: skip
check_op("linear 3d", lambda x, w: F.linear(x, w), randn(2, 3, 4), randn(5, 4),
         partial=False)  # fmt: skip
check_op("view split", lambda x: x.view(2, 3, 4) * 1, randn(6, 4))
check_op("view merge", lambda x: x.reshape(6, 4) * 1, randn(2, 3, 4))
check_op("transpose", lambda x: x.transpose(0, 1) * 1, a)
check_op("t", lambda x: x.t() * 1, a)
check_op("permute", lambda x: x.permute(2, 0, 1) * 1, randn(2, 3, 4))
check_op("unsqueeze", lambda x: x.unsqueeze(1) * 1, a)
check_op("squeeze", lambda x: x.squeeze() * 1, randn(3, 1, 2))
check_op("cat", lambda x, y: ember.cat([x, y], 1), a, randn(5, 2))
check_op("stack", lambda x, y: ember.stack([x, y], 1), a, b)
check_op("split", lambda x: x.split([1, 3], 1)[1] * 1, a)
check_op("select", lambda x: x[:, 2] * 1, a)
check_op("unbind", lambda x: x.unbind()[1] * 1, a)
check_op("narrow", lambda x: x.narrow(0, 1, 3) * 1, a)
check_op("softmax", lambda x: F.softmax(x, -1), a, partial=False)
check_op("log_softmax", lambda x: F.log_softmax(x, 0), a, partial=False)
check_op("layer_norm", lambda x, w, c: F.layer_norm(x, (4,), w, c), randn(3, 5, 4),
         randn(4), randn(4), partial=False)  # fmt: skip
check_op("embedding", lambda w, i: F.embedding(i, w), randn(7, 4),
         ember.tensor([[0, 6, 2], [3, 3, 5]]), partial=False)  # fmt: skip
check_op("cross_entropy", lambda x, t: F.cross_entropy(x, t), a, ember.tensor([0, 3, 1, 2, 0]),
         partial=False)  # fmt: skip
check_op("cross_entropy sum", lambda x, t: F.cross_entropy(x, t, reduction="sum"), a,
         ember.tensor([0, 3, 1, 2, 0]), partial=False)  # fmt: skip
check_op("nll none", lambda x, t: F.nll_loss(F.log_softmax(x, 1), t, reduction="none"), a,
         ember.tensor([0, 3, 1, 2, 0]), partial=False)  # fmt: skip

# scaled_dot_product_attention (the fused op on CPU, as in PyTorch): the batch stays sharded
q, k, v = randn(4, 2, 5, 3), randn(4, 2, 5, 3), randn(4, 2, 5, 3)
for p in (Shard(0), Shard(1), Replicate()):
    dq, dk, dv = (distribute_tensor(t, mesh, [p]) for t in (q, k, v))
    with implicit_replication():  # the causal mask ember's decomposition makes is plain
        o = F.scaled_dot_product_attention(dq, dk, dv, is_causal=True)
    if p != Shard(1):  # heads merge into the batch for bmm: gathered (NOTE [view groups])
        assert o.placements == (p,), (p, o.placements)
    close(o.full_tensor(), F.scaled_dot_product_attention(q, k, v, is_causal=True), f"sdpa {p}")

# ---------------------------------------------------------------- the replicate fallback
x = randn(4, 3)
d = distribute_tensor(x, mesh, [Shard(0)])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y = ember.cumsum(d, 0)
    ember.cumsum(d, 0)
msgs = [str(w.message) for w in caught if "DTensor" in str(w.message)]
assert len(msgs) == 1 and "aten.cumsum.default" in msgs[0], msgs
assert y.placements == (Replicate(),)
close(y.full_tensor(), ember.cumsum(x, 0), "fallback cumsum")

# data-dependent results (NOTE [data-dependent results]): item() reads quietly
x = ember.arange(6.0)
d = distribute_tensor(x, mesh, [Shard(0)])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert d.sum().item() == 15.0 and float(d.amax()) == 5.0
    nz = ember.nonzero(d > 2)
msgs = [str(w.message) for w in caught]
assert len(msgs) == 1 and "aten.nonzero.default has a data-dependent result" in msgs[0], msgs
assert nz.placements == (Replicate(),)
close(nz.full_tensor(), ember.nonzero(x > 2), "nonzero")

# writes through views (NOTE [views of DTensors])
x = ember.arange(12.0).reshape(4, 3)
d = distribute_tensor(x, mesh, [Shard(0)])
d[:, 1].add_(100)  # the view's pieces are views of d's pieces: the write reaches d
x[:, 1] += 100
close(d.full_tensor(), x, "a write through a view")
try:
    d[1].add_(1)  # row 1 lies on one rank: the view gathered a copy
    raise AssertionError("a write into a gathered copy was accepted")
except NotImplementedError as e:
    assert "aten.add_.Tensor" in str(e), e
close(d.full_tensor(), x, "nothing written by the refused write")

# ---------------------------------------------------------------- errors
for read in ("numpy", "tolist"):
    try:
        getattr(d, read)()
        raise AssertionError(f"DTensor.{read}() gave a value")
    except RuntimeError as e:
        assert "full_tensor()" in str(e), e
try:
    distribute_tensor(x, mesh, [Shard(0)]) + ember.ones(4, 3)
    raise AssertionError("mixing a DTensor with a plain tensor was accepted")
except RuntimeError as e:
    assert "aten.add.Tensor" in str(e) and "DTensor" in str(e), e

print(f"rank {rank}: dtensor ops OK ({CHECKS[0]} checks)")
