"""``saved_tensors_hooks``: a pair of functions that every tensor autograd saves for
backward goes through, ``pack`` when it is saved and ``unpack`` when backward reads it, as
PyTorch's ``torch.autograd.graph.saved_tensors_hooks`` (and ``save_on_cpu``,
``disable_saved_tensors_hooks``).

# NOTE [packed saved tensors]
While a pair is active, recording an op calls ``pack`` on each tensor its formula reads
(inputs and outputs alike, and what a custom ``Function`` saves with
``save_for_backward``), and backward calls ``unpack`` on what ``pack`` returned and gives
the formula that. ember's node still keeps the saved tensor itself too, for the in-place
version check and the second-backward error (PyTorch frees it, leaving only what ``pack``
returned): the values backward computes with are always ``unpack``'s. ``pack`` runs with
grad mode off, as PyTorch's does, so the ops it calls save nothing (and pack nothing again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad

#: the active (pack, unpack) pairs, innermost last; only the innermost applies
STACK: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
#: the message of an enclosing ``disable_saved_tensors_hooks`` (None: hooks allowed)
_DISABLED: list[str] = []


class saved_tensors_hooks:  # noqa: N801 (PyTorch's name)
    """A with-block in which saved tensors go through ``pack_hook``/``unpack_hook``.

    >>> seen = []
    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.autograd.graph.saved_tensors_hooks(lambda t: seen.append(1) or t, lambda t: t):
    ...     y = (x * x).sum()
    >>> len(seen)
    2
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if _DISABLED:
            raise RuntimeError(_DISABLED[-1])
        STACK.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: object) -> None:
        STACK.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 (PyTorch's name)
    """Saved tensors kept on the CPU (ember's only device: a copy-free pass-through)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks:  # noqa: N801 (PyTorch's name)
    """A with-block in which entering ``saved_tensors_hooks`` raises ``error_message``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        _DISABLED.append(self.error_message)

    def __exit__(self, *exc: object) -> None:
        _DISABLED.pop()


class Packed:
    """What ``pack`` returned for one saved tensor, with the ``unpack`` to read it by."""

    __slots__ = ("value", "unpack_hook")

    def __init__(self, t: Any) -> None:
        pack, self.unpack_hook = STACK[-1]
        with no_grad():  # as PyTorch: the hook's own ops record nothing (nor pack again)
            self.value = pack(t)

    def unpack(self) -> Any:
        t = self.unpack_hook(self.value)
        if not isinstance(t, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type(t).__name__}"
            )
        return t


def pack_node(node: Any, params: list[tuple[int, str]]) -> None:
    """Pack what ``node``'s formula reads (NOTE [packed saved tensors]): its saved inputs
    (``params``: (position or -1, name) of each) and its saved result; its backward then
    unpacks."""
    vjp, args, kwargs = node.ctx
    packed_args, packed_kwargs = list(args), dict(kwargs)
    for pos, name in params:
        if 0 <= pos < len(args):
            packed_args[pos] = _packed(args[pos])
        elif name in kwargs:
            packed_kwargs[name] = _packed(kwargs[name])
    node.ctx = (vjp, tuple(packed_args), packed_kwargs)
    result = node.result
    if result is not None:
        node.result = _packed(result)
    inner = node.backward_fn

    def backward(n: Any, grads: Any) -> Any:
        ctx, res = n.ctx, n.result
        if ctx is None:  # released: the formula raises the second-backward error
            return inner(n, grads)
        v, a, kw = ctx
        n.ctx = (v, tuple(_unpacked(x) for x in a), {k: _unpacked(x) for k, x in kw.items()})
        if res is not None:
            n.result = _unpacked(res)
            if isinstance(result, tuple):  # as the formula expects it (a return_types tuple)
                make = getattr(type(result), "_make", None)
                n.result = make(n.result) if make is not None else tuple(n.result)
        try:
            return inner(n, grads)
        finally:
            if n.ctx is not None:
                n.ctx = ctx
                n.result = res

    node.backward_fn = backward


def _packed(x: Any) -> Any:
    if isinstance(x, Tensor):
        return Packed(x)
    if isinstance(x, (list, tuple)):
        return [Packed(t) if isinstance(t, Tensor) else t for t in x]
    return x


def _unpacked(x: Any) -> Any:
    if isinstance(x, Packed):
        return x.unpack()
    if isinstance(x, list):
        return [_unpacked(t) for t in x]
    return x
