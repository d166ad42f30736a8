"""Extending torch from Python: a __torch_function__ subclass that keeps its type and
metadata, a LoggingTensor wrapper through __torch_dispatch__ (with autograd), a
TorchFunctionMode that logs and redirects calls, a TorchDispatchMode counting aten ops of a
training step, a ScaledTensor that keeps a scale beside int data, and the subclass through
pickling, deepcopy, Parameters and modules. Prints what each saw."""

import copy
import pickle
from collections import Counter

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map


def name(func):
    """An aten overload's name without the library prefix: 'aten.mm.default'."""
    s = str(func)
    return s[s.index("aten.") :] if "aten." in s else s


# 1. a __torch_function__ subclass carrying metadata
class TaggedTensor(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = super().__torch_function__(func, types, args, kwargs)
        tags = [a.tag for a in args if isinstance(a, TaggedTensor) and hasattr(a, "tag")]
        if isinstance(out, TaggedTensor) and tags and not hasattr(out, "tag"):
            out.tag = tags[0]
        return out


t = torch.arange(6.0).reshape(2, 3).as_subclass(TaggedTensor)
t.tag = "weights"
u = (t * 2 + 1).sum(0)
print("tagged", type(u).__name__, u.tag, u.tolist(), type(t[0]).__name__)
print("tagged ops", type(torch.nn.functional.relu(t)).__name__, type(t.numpy()).__name__)
print("tagged methods", type(t.T).__name__, type(t.shape).__name__, t.dtype == torch.float32)
plain = torch.ones(3)
print("mixed", type(plain + t[0]).__name__, type(torch.cat([plain, t[0]])).__name__)


# 2. a LoggingTensor wrapper through __torch_dispatch__
class LoggingTensor(torch.Tensor):
    elem: torch.Tensor
    __slots__ = ["elem"]
    log = []

    @staticmethod
    def __new__(cls, elem, *args, **kwargs):
        r = torch.Tensor._make_wrapper_subclass(
            cls,
            elem.size(),
            strides=elem.stride(),
            storage_offset=elem.storage_offset(),
            dtype=elem.dtype,
            layout=elem.layout,
            device=elem.device,
            requires_grad=kwargs.get("requires_grad", False),
        )
        r.elem = elem.detach() if r.requires_grad else elem
        return r

    def __repr__(self):
        return f"LoggingTensor({self.elem})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(e):
            return e.elem if isinstance(e, cls) else e

        def wrap(e):
            return cls(e) if isinstance(e, torch.Tensor) else e

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        cls.log.append(name(func))
        return tree_map(wrap, out)


x = LoggingTensor(torch.tensor([1.0, 2.0, 3.0]), requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = (x * w).sin().sum()
y.backward()
print("logging forward+backward", Counter(LoggingTensor.log).most_common())
print(
    "logging grads",
    type(x.grad).__name__,
    x.grad.elem.tolist(),
    type(w.grad).__name__,
    [round(v, 5) for v in w.grad.elem.tolist()],
)
print("logging repr", repr(LoggingTensor(torch.tensor([1, 2]))))
print(
    "logging meta",
    tuple(x.shape),
    x.dtype == torch.float32,
    x.requires_grad,
    x.is_leaf,
    y.requires_grad,
)


# 3. a TorchFunctionMode that logs and redirects
class FunctionLog(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.calls.append(getattr(func, "__name__", str(func)))
        if func is torch.nn.functional.gelu:  # redirect: gelu computed as tanh approximation
            kwargs = {**kwargs, "approximate": "tanh"}
        return func(*args, **kwargs)


with FunctionLog() as mode:
    a = torch.linspace(-2, 2, 5)
    b = torch.nn.functional.gelu(a)
    c = torch.matmul(a.unsqueeze(0), b.unsqueeze(1)).squeeze()
print("function mode calls", mode.calls)
print("function mode values", [round(v, 5) for v in b.tolist()], round(c.item(), 5))


# 4. a TorchDispatchMode counting aten ops of a training step
class OpCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.counts = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[name(func)] += 1
        return func(*args, **(kwargs or {}))


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
inp = torch.linspace(-1, 1, 12).reshape(3, 4)
target = torch.tensor([0, 1, 1])
with OpCounter() as counter:
    loss = nn.functional.cross_entropy(model(inp), target)
    loss.backward()
    opt.step()
print("dispatch counts", sorted(k for k in counter.counts.items() if "aten" in k[0]))
print("dispatch loss", round(loss.item(), 5))


# 5. a quantized-style wrapper: int8 data and a float scale
class ScaledTensor(torch.Tensor):
    @staticmethod
    def __new__(cls, data, scale):
        return torch.Tensor._make_wrapper_subclass(cls, data.shape, dtype=torch.float32)

    def __init__(self, data, scale):
        self.data_int = data
        self.scale = scale

    def __repr__(self):
        return f"ScaledTensor(scale={self.scale})"

    def dequantize(self):
        return self.data_int.to(torch.float32) * self.scale

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if (
            func is torch.ops.aten.mul.Tensor
            and isinstance(args[0], ScaledTensor)
            and not isinstance(args[1], torch.Tensor)
        ):
            return ScaledTensor(args[0].data_int, args[0].scale * args[1])
        if func is torch.ops.aten.detach.default:
            return ScaledTensor(args[0].data_int, args[0].scale)
        plain = tree_map(
            lambda e: e.dequantize() if isinstance(e, ScaledTensor) else e, (args, kwargs)
        )
        return func(*plain[0], **plain[1])


q = ScaledTensor(torch.tensor([[1, -2], [3, 4]], dtype=torch.int8), 0.5)
print("scaled", type(q * 4).__name__, (q * 4).scale, (q + 1).tolist(), torch.mm(q, q).tolist())
print(
    "scaled detach",
    type(q.detach()).__name__,
    q.detach().scale,
    tuple(q.shape),
    q.dtype == torch.float32,
)


# 6. subclasses through pickling, deepcopy, Parameters and modules
class Marked(torch.Tensor):
    pass


class Slotted(torch.Tensor):
    __slots__ = ["extra"]


m = torch.tensor([1.0, 2.0]).as_subclass(Marked)
m.note = "kept"
back = pickle.loads(pickle.dumps(m))
print("pickle", type(back).__name__, back.note, back.tolist(), back.requires_grad)
s = torch.tensor([3.0]).as_subclass(Slotted)
s.extra = {"k": 1}
back = pickle.loads(pickle.dumps(s))
print("pickle slots", type(back).__name__, back.extra, back.tolist())
p = nn.Parameter(torch.ones(2).as_subclass(Marked))
p.note = "param"
print(
    "parameter",
    type(p).__name__,
    isinstance(p, Marked),
    isinstance(p, nn.Parameter),
    p.requires_grad,
)
back = pickle.loads(pickle.dumps(p))
print(
    "pickle parameter",
    type(back).__name__,
    isinstance(back, nn.Parameter),
    back.note,
    back.requires_grad,
)
lin = nn.Linear(2, 1)
lin.weight = nn.Parameter(lin.weight.detach().as_subclass(Marked))
print("module param", type(lin.weight).__name__, type(lin(torch.ones(1, 2))).__name__)
w = LoggingTensor(torch.tensor([1.0, 2.0]), requires_grad=True)
w.note = "wrapped"
d = copy.deepcopy(w)
print(
    "deepcopy wrapper", type(d).__name__, d.note, d.elem.tolist(), d.requires_grad, d.elem is w.elem
)
back = pickle.loads(pickle.dumps(w))
print("pickle wrapper", type(back).__name__, back.note, back.elem.tolist(), tuple(back.shape))
leaf = torch.ones(2, requires_grad=True)
leaf.note = 3
leaf.grad = torch.full((2,), 0.5)
d = copy.deepcopy(leaf)
print("deepcopy tensor", d.note, d.requires_grad, d.grad.tolist(), d.is_leaf)
param = nn.Parameter(torch.zeros(3))
d = copy.deepcopy({"a": param, "b": param})
print("deepcopy memo", d["a"] is d["b"], type(d["a"]).__name__)
try:
    copy.deepcopy(leaf * 2)
except RuntimeError as e:
    print("deepcopy non-leaf", str(e)[:48])
