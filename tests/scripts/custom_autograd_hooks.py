"""Custom autograd: Functions with ctx.save_for_backward, needs_input_grad,
mark_non_differentiable, once_differentiable, set_materialize_grads and double backward;
gradcheck of them; tensor hooks (register_hook, retain_grad, post-accumulate-grad hooks)
and module hooks (forward pre/post, full backward, state-dict); autograd.grad with
create_graph; saved-tensor hooks. Prints gradients and what the hooks saw."""

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable

rng = np.random.default_rng(7)


def r(*shape):
    return torch.from_numpy(rng.standard_normal(shape))  # float64


def fmt(t):
    return np.round(np.asarray(t.detach().tolist(), dtype=np.float64), 5).tolist()


class MyExp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y  # differentiable: double backward works


class ScaledMatmul(Function):
    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        ctx.scale = scale
        return a @ b * scale

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g @ b.t() * ctx.scale if ctx.needs_input_grad[0] else None
        gb = a.t() @ g * ctx.scale if ctx.needs_input_grad[1] else None
        return ga, gb, None


class SortWithIndex(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, g, _):
        (idx,) = ctx.saved_tensors
        return torch.zeros_like(g).scatter(-1, idx, g)


class Clip(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, g):
        if g is None:
            return None, None, None
        (x,) = ctx.saved_tensors
        return g * ((x >= ctx.lo) & (x <= ctx.hi)), None, None


# custom Functions, their gradients and gradcheck
x = r(3).requires_grad_()
y = MyExp.apply(x)
(g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
(gg,) = torch.autograd.grad(g.sum(), x)
print("myexp", fmt(y), fmt(g), fmt(gg), type(y.grad_fn).__name__)
a, b = r(2, 3).requires_grad_(), r(3, 4)
ScaledMatmul.apply(a, b, 0.5).pow(2).sum().backward()
print("scaled a.grad", fmt(a.grad), "b.grad", b.grad)
v, i = SortWithIndex.apply(x.detach().requires_grad_())
print("sort", fmt(v), i.tolist(), v.requires_grad, i.requires_grad)
xs = r(4).requires_grad_()
vs, _ = SortWithIndex.apply(xs)
(vs * torch.arange(4.0, dtype=torch.float64)).sum().backward()
print("sort grad", fmt(xs.grad))
xc = torch.tensor([-2.0, 0.5, 3.0], dtype=torch.float64, requires_grad=True)
Clip.apply(xc, -1.0, 1.0).sum().backward()
print("clip grad", fmt(xc.grad))
print("gradcheck", torch.autograd.gradcheck(MyExp.apply, (r(3).requires_grad_(),)))
print(
    "gradcheck2",
    torch.autograd.gradcheck(
        lambda p, q: ScaledMatmul.apply(p, q, 2.0),
        (r(2, 2).requires_grad_(), r(2, 2).requires_grad_()),
    ),
)
print("gradgradcheck", torch.autograd.gradgradcheck(MyExp.apply, (r(2).requires_grad_(),)))

# tensor hooks
seen = []
w = r(3).requires_grad_()
h = w * 2
h.retain_grad()
handle = h.register_hook(lambda grad: seen.append(("h", fmt(grad))) or grad * 10)
w.register_hook(lambda grad: seen.append(("w", fmt(grad))))
w.register_post_accumulate_grad_hook(lambda p: seen.append(("acc", fmt(p.grad))))
(h * h).sum().backward()
print("hooks", seen)
print("h.grad", fmt(h.grad), "w.grad", fmt(w.grad))
handle.remove()
seen.clear()
w.grad = None
(w * 2).sum().backward()
print("after remove", seen, fmt(w.grad))


# module hooks
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2).double()
        self.act = nn.Tanh()

    def forward(self, x):
        return self.act(self.lin(x))


torch.manual_seed(0)
m = Block()
with torch.no_grad():
    m.lin.weight.copy_(r(2, 3))
    m.lin.bias.copy_(r(2))
log = []
m.register_forward_pre_hook(lambda mod, args: log.append(("pre", tuple(args[0].shape))))
m.lin.register_forward_hook(lambda mod, args, out: log.append(("fwd", fmt(out))))
m.lin.register_forward_hook(lambda mod, args, kwargs, out: out * 2, with_kwargs=True)
m.act.register_full_backward_hook(
    lambda mod, gin, gout: log.append(("bwd", fmt(gin[0]), fmt(gout[0])))
)
m.lin.register_full_backward_pre_hook(lambda mod, gout: log.append(("bwdpre", fmt(gout[0]))))
inp = r(1, 3).requires_grad_()
out = m(inp)
out.sum().backward()
for entry in log:
    print("module hook", entry)
print("out", fmt(out), "inp.grad", fmt(inp.grad))
print("lin.weight.grad", fmt(m.lin.weight.grad))


def rename(module, state_dict, prefix, local_metadata):
    state_dict[prefix + "extra"] = torch.ones(1)


m.lin._register_state_dict_hook(rename)
print("state keys", sorted(m.state_dict()))
m.register_buffer("steps", torch.zeros((), dtype=torch.int64))
print("buffers", [n for n, _ in m.named_buffers()], "params", [n for n, _ in m.named_parameters()])

# saved-tensor hooks: pack to NumPy and back
packed = []


def pack(t):
    packed.append(tuple(t.shape))
    return t.detach().numpy().copy()


def unpack(arr):
    return torch.from_numpy(arr)


z = r(2, 2).requires_grad_()
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    loss = (z.sin() * z).sum()
loss.backward()
print("saved", sorted(packed), "grad", fmt(z.grad))

# higher-order: Hessian-vector product by double backward
q = r(3).requires_grad_()
f = (q**3).sum() + (q[0] * q[1])
(gq,) = torch.autograd.grad(f, q, create_graph=True)
(hv,) = torch.autograd.grad(gq, q, grad_outputs=torch.ones(3, dtype=torch.float64))
print("hvp", fmt(hv))
jac = torch.autograd.functional.jacobian(lambda t: t.sin() * t.sum(), r(3))
print("jacobian", fmt(jac))
with torch.no_grad():
    print("no_grad", (q * 2).requires_grad)
with torch.enable_grad():
    print("enable_grad", (q * 2).requires_grad)
print("detach", q.detach().requires_grad, q.detach().is_leaf, (q * 2).is_leaf)
