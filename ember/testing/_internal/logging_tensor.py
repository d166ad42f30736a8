"""``LoggingTensor`` and ``LoggingTensorMode``: log every op that reaches the Python key, as
``torch.testing._internal.logging_tensor`` does, in lines such as
``$2: f32[1] = aten.mul.Tensor($0, $1)`` (PyTorch's lines name the op with its module,
``torch._ops.aten.mul.Tensor``).

>>> from ember.testing._internal.logging_tensor import LoggingTensor, capture_logs, log_input
>>> x = LoggingTensor(ember.ones(1), requires_grad=True)
>>> with capture_logs() as logs:
...     log_input("x", x)
...     y = x * x
>>> print("\\n".join(logs))
$0: f32[1] = input('x')
$1: f32[1] = aten.mul.Tensor($0, $0)
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Iterator
from typing import Any

from ember import dtypes
from ember._tensor import Tensor
from ember.overrides import enable_reentrant_dispatch
from ember.utils._python_dispatch import TorchDispatchMode
from ember.utils._pytree import tree_map

__all__ = [
    "LoggingTensor",
    "LoggingTensorMode",
    "LoggingTensorReentrant",
    "capture_logs",
    "log_input",
]

_log = logging.getLogger("ember.LoggingTensor")


class LoggingTensor(Tensor):
    """A wrapper subclass around ``elem`` that logs each op it takes part in."""

    elem: Tensor
    context: Any = contextlib.nullcontext

    def __new__(cls, elem: Tensor, *args: Any, **kwargs: Any) -> LoggingTensor:
        r = Tensor._make_wrapper_subclass(  # type: ignore[attr-defined]
            cls,
            elem.size(),
            strides=elem.stride(),
            storage_offset=elem.storage_offset(),
            dtype=elem.dtype,
            device=elem.device,
            requires_grad=kwargs.get("requires_grad", False),
        )
        # the wrapper holds autograd's history; the wrapped tensor must hold none
        r.elem = elem.detach() if r.requires_grad else elem
        return r

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return super().__repr__(tensor_contents=f"{self.elem}")

    @classmethod
    def __torch_dispatch__(
        cls, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        def unwrap(e: Any) -> Any:
            return e.elem if isinstance(e, cls) else e

        def wrap(e: Any) -> Any:
            return cls(e) if isinstance(e, Tensor) else e

        with cls.context():
            out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        rs = tree_map(wrap, out)
        _log.info(f"{func}", args, kwargs or {}, rs)
        return rs


class LoggingTensorReentrant(LoggingTensor):
    """A LoggingTensor whose handler's ops are recorded by autograd (re-entrant dispatch)."""

    context = enable_reentrant_dispatch


class LoggingTensorMode(TorchDispatchMode):
    """Logs every op, as LoggingTensor does, for plain tensors."""

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        rs = func(*args, **(kwargs or {}))
        _log.info(f"{func}", args, kwargs or {}, rs)
        return rs


class _Handler(logging.Handler):
    """Formats log records as ``$out: dtype[shape] = op($in, ...)``, numbering tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.logs: list[str] = []
        # by id, with a weak reference to tell a reused id (Tensor's == is an op, so
        # tensors cannot be dictionary keys)
        self.ids: dict[int, tuple[weakref.ref[Any], int]] = {}
        self.next = 0

    def _id(self, t: Tensor) -> int:
        found = self.ids.get(id(t))
        if found is None or found[0]() is not t:
            found = self.ids[id(t)] = (weakref.ref(t), self.next)
            self.next += 1
        return found[1]

    def _fmt(self, x: Any) -> str:
        if isinstance(x, Tensor):
            return f"${self._id(x)}"
        if isinstance(x, (list, tuple)):
            inner = ", ".join(self._fmt(e) for e in x)
            return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
        return repr(x)

    def _type(self, t: Any) -> str:
        if isinstance(t, Tensor):
            return f"{_SHORT.get(t.dtype, str(t.dtype))}[{', '.join(map(str, t.shape))}]"
        return type(t).__name__

    def emit(self, record: logging.LogRecord) -> None:
        name = record.msg
        args, kwargs, out = record.args  # type: ignore[misc]
        fargs = ", ".join(
            [self._fmt(a) for a in args] + [f"{k}={self._fmt(v)}" for k, v in kwargs.items()]
        )
        outs = out if isinstance(out, (list, tuple)) else (out,)
        lhs = ", ".join(f"{self._fmt(o)}: {self._type(o)}" for o in outs if isinstance(o, Tensor))
        self.logs.append(f"{lhs} = {name}({fargs})" if lhs else f"{name}({fargs})")


_SHORT = {
    dtypes.float16: "f16", dtypes.float32: "f32", dtypes.float64: "f64",
    dtypes.int8: "i8", dtypes.int16: "i16", dtypes.int32: "i32", dtypes.int64: "i64",
    dtypes.uint8: "u8", dtypes.bool_: "b8", dtypes.complex64: "c64", dtypes.complex128: "c128",
}  # fmt: skip


def log_input(name: str, var: Any) -> None:
    """Log ``var`` as the input called ``name`` (it gets the next ``$`` number)."""
    _log.info("input", (name,), {}, var)


@contextlib.contextmanager
def capture_logs(is_mode: bool = False) -> Iterator[list[str]]:
    """Collect the log lines of the block into the yielded list."""
    handler = _Handler()
    old_level, old_prop = _log.level, _log.propagate
    _log.addHandler(handler)
    _log.setLevel(logging.INFO)
    _log.propagate = False
    try:
        yield handler.logs
    finally:
        _log.removeHandler(handler)
        _log.setLevel(old_level)
        _log.propagate = old_prop
