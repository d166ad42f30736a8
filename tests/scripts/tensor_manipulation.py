"""Everyday tensor manipulation: creation, indexing (basic, advanced, boolean), views and
their aliasing, reshaping, cat/stack/split/chunk, scatter/gather, index_add/index_copy,
sorting and top-k, masking, einsum, broadcasting, reductions and type conversions. Prints
the results as lists."""

import numpy as np
import torch

rng = np.random.default_rng(3)
a = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))
i = torch.arange(24).reshape(2, 3, 4)


def show(name, t):
    if isinstance(t, torch.Tensor):
        dtype = str(t.dtype).split(".")[-1]
        vals = t.tolist()
        if t.is_floating_point():
            vals = np.round(np.asarray(vals, dtype=np.float64), 4).tolist()
        print(name, tuple(t.shape), dtype, vals)
    else:
        print(name, tuple(t) if isinstance(t, torch.Size) else t)


# indexing
show("row", a[1])
show("col", a[:, 2])
show("step", a[::2, 1::2])
show("neg", a[-1, -2:])
show("ellipsis", i[..., 1])
show("none", i[None, :, 0, None].shape)
show("fancy", a[[0, 2, 3], [1, 1, 4]])
show("fancy2d", i[torch.tensor([[0], [1]]), torch.tensor([0, 2])])
show("bool", a[a > 0.5])
show("boolrow", i[torch.tensor([True, False])])
show("mixed", i[1, [0, 2], 1:3])

# views share memory
v = a.view(20)
v[0] = 100.0
show("view_alias", a[0, 0])
t = a.t()
print("t contiguous", t.is_contiguous(), t.stride(), t.contiguous().stride())
show("transpose", i.transpose(0, 2).reshape(4, -1)[:, :3])
show("permute", i.permute(2, 0, 1).flatten(1)[1])
show("unsqueeze", i.unsqueeze(1).shape)
show("squeeze", torch.zeros(1, 3, 1).squeeze().shape)
show("expand", torch.tensor([1, 2, 3]).expand(2, 3))
show("narrow", i.narrow(2, 1, 2)[0])
show("unfold", torch.arange(7.0).unfold(0, 3, 2))
show("movedim", i.movedim(0, -1).shape)
s = i.clone()
s[:, 1] = -1
s[0, :, ::3] += 100
show("setitem", s)
s[s < 0] = 0
show("masked_set", s[0])

# combine and split
show("cat", torch.cat([a[:1], a[2:3]], dim=0))
show("stack", torch.stack([i[0, 0], i[1, 1]], dim=1))
show("hstack", torch.hstack([torch.ones(2), torch.zeros(3)]))
show("vstack", torch.vstack([torch.arange(3), torch.arange(3, 6)]))
print("split", [tuple(p.shape) for p in torch.arange(10).split([3, 3, 4])])
print("chunk", [p.tolist() for p in torch.arange(10).chunk(3)])
print("unbind", [p.tolist() for p in i[0].unbind(1)])
print("tensor_split", [p.tolist() for p in torch.arange(7).tensor_split(3)])

# scatter / gather / index ops
idx = torch.tensor([[0, 1, 2, 0, 1], [2, 0, 1, 1, 0]])
show("scatter", torch.zeros(3, 5).scatter(0, idx, torch.ones(2, 5)))
show("scatter_add", torch.zeros(3, 5).scatter_add(0, idx, a[:2]))
show("scatter_reduce", torch.full((3,), 1.0).scatter_reduce(0, idx[0], a[0], "amax"))
show("gather", a.gather(1, torch.tensor([[0, 0], [1, 0], [4, 3], [2, 2]])))
show("index_select", i.index_select(1, torch.tensor([2, 0])))
show("index_add", torch.zeros(3, 2).index_add_(0, torch.tensor([0, 2, 0]), torch.ones(3, 2)))
show("index_copy", torch.zeros(4).index_copy(0, torch.tensor([3, 1]), torch.tensor([5.0, 6.0])))
show("index_fill", torch.arange(6.0).index_fill(0, torch.tensor([1, 4]), -1))
show("take", torch.take(i, torch.tensor([0, 5, 23])))
show("take_along", torch.take_along_dim(a, a.argmax(1, keepdim=True), dim=1))
show("put", torch.zeros(2, 2).put_(torch.tensor([3, 0]), torch.tensor([9.0, 8.0])))

# masking
m = a > 0
show("where", torch.where(m, a, torch.zeros_like(a)))
show("where1", torch.where(m[0]))
show("masked_fill", a.masked_fill(~m, -1.0)[1])
show("masked_select", a.masked_select(m)[:4])
show(
    "masked_scatter",
    torch.zeros(2, 3).masked_scatter(
        torch.tensor([[1, 0, 1], [0, 1, 0]]).bool(), torch.arange(1.0, 7.0)
    ),
)
show("nonzero", m[:2].nonzero())
show("any_all", torch.stack([m.any(1), m.all(1)]))
show("count", m.sum(1))
show("clamp", a.clamp(-0.5, 0.5)[0])

# sorting
vals, order = a[1:].sort(dim=1, descending=True)
show("sort", vals)
show("order", order)
show("argsort", a[0].argsort())
top = a.topk(2, dim=1)
show("topk", top.values)
show("topk_i", top.indices)
show("kth", a.kthvalue(2, dim=1).values)
show("unique", torch.tensor([3, 1, 3, 2, 1]).unique())
u, inv, cnt = torch.unique(torch.tensor([3, 1, 3, 2, 1]), return_inverse=True, return_counts=True)
show("unique_inv", inv)
show("unique_cnt", cnt)
show("unique_consec", torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1])))
show(
    "searchsorted", torch.searchsorted(torch.tensor([1.0, 3.0, 5.0]), torch.tensor([0.0, 3.0, 4.0]))
)
show("bucketize", torch.bucketize(torch.tensor([0.5, 2.0, 9.0]), torch.tensor([1.0, 2.0, 3.0])))
show("cummax", a[0].cummax(0).values)
show("flip", i[0].flip(0))
show("roll", torch.arange(6).roll(2))
show("msort", torch.msort(a[:, :2]))

# einsum and friends
b = torch.from_numpy(rng.standard_normal((5, 3)).astype(np.float32))
show("einsum_mm", torch.einsum("ij,jk->ik", a, b))
show("einsum_trace", torch.einsum("ii", a[:, :4]))
show("einsum_outer", torch.einsum("i,j->ij", a[0, :2], b[0]))
show(
    "einsum_batch",
    torch.einsum("bij,bjk->bik", i.float()[:, :2], i.float().transpose(1, 2)[:, :, :2]),
)
show("einsum_ellipsis", torch.einsum("...j,j->...", a, a[0]))
show("tensordot", torch.tensordot(a, b, dims=([1], [0])))
show("outer", torch.outer(torch.arange(3.0), torch.arange(2.0)))
show("kron", torch.kron(torch.eye(2), torch.ones(2, 2)))
show("cross", torch.linalg.cross(a[:2, :3], b[:2]))
show("tril", torch.tril(a, diagonal=-1)[:3, :3])
show("diag", torch.diag(a[:, :4]))
show("diag_embed", torch.diag_embed(torch.tensor([[1.0, 2.0]])))

# broadcasting, reductions and types
show("broadcast", (torch.arange(3).view(3, 1) * torch.arange(4)).sum(0))
show("mean", a.mean(dim=0, keepdim=True))
show("var", a.var(1, unbiased=True))
show("std_mean", torch.stack(torch.std_mean(a, dim=0)))
show("logsumexp", a.logsumexp(1))
show("cumsum", i[0].cumsum(1))
show("prod", torch.tensor([[1, 2], [3, 4]]).prod(0))
show("norm", a.norm(dim=1))
show("amax", i.amax(dim=(0, 2)))
show("max", a.max(dim=1).indices)
show("median", a.median(dim=1).values)
show("int_div", torch.tensor([7, -7]) // 2)
show("true_div", torch.tensor([7, -7]) / 2)
show("fmod", torch.fmod(torch.tensor([-3.0, 3.0]), 2))
show("remainder", torch.tensor([-3, 3]) % 2)
show("promote", torch.tensor([1, 2], dtype=torch.int32) + 1.5)
show("to_half", a[0].half().float())
show("to_bool", torch.tensor([0.0, 0.1]).bool())
show("to_long", torch.tensor([-1.7, 1.7]).long())
show("numpy", torch.from_numpy(np.arange(3)).numpy() * 2)
show("repeat", torch.tensor([1, 2]).repeat(2, 2))
show("repeat_interleave", torch.tensor([1, 2]).repeat_interleave(torch.tensor([1, 3])))
show("tile", torch.tile(torch.tensor([1, 2]), (2,)))
show("meshgrid", torch.stack(torch.meshgrid(torch.arange(2), torch.arange(3), indexing="ij")))
show("pad", torch.nn.functional.pad(torch.ones(2, 2), (1, 0, 0, 1)))
show("new_full", a.new_full((2,), 7))
show("zeros_like", torch.zeros_like(i, dtype=torch.float32).sum())
show("arange_float", torch.arange(0, 1, 0.25))
show("linspace", torch.linspace(0, 1, 5))
show("item", i.sum().item())
print("numel", i.numel(), i.dim(), i.size(1), i.shape[-1], len(i))
