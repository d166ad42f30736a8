"""``Optimizer``: parameter groups, per-parameter state, and their ``state_dict`` in
PyTorch's layout.

# NOTE [optimizer state_dict layout]
``{"state": {index: {name: value}}, "param_groups": [{option: value, ..., "params": [index]}]}``
where ``index`` numbers the parameters 0, 1, ... across the groups in order, so a state dict
saved from one model loads into another built the same way. ``load_state_dict`` maps the
indices back to this optimizer's parameters, casting floating state tensors (all but
``"step"``) to the parameter's dtype and device.

# NOTE [foreach updates]
PyTorch's optimizers update parameters one tensor at a time, or, with ``foreach=True``,
with one foreach op per step of the update for all of them (``_foreach_add_``: NOTE
[foreach ops] in ``ember/ops/native/foreach.py``). ember does the same, with PyTorch's
default for a CPU tensor: ``foreach=None`` is the single-tensor form. The values are the
same either way; what differs is what ``__torch_dispatch__`` and the Python key see. (In
ember the foreach form saves the dispatch per parameter, a few microseconds each, which a
training step of a small model does not notice next to the arithmetic.)
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Callable
from typing import Any, ClassVar

import ember
from ember._graph_break import side_effect
from ember._tensor import Tensor
from ember.autograd.profiler import record_function
from ember.dispatch import marks
from ember.nn.modules.module import RemovableHandle, _reset_grad, _typename
from ember.ops.registry import ops

aten = ops.aten

__all__ = [
    "Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook",
    "required",
]  # fmt: skip

#: hooks every optimizer's ``step`` runs (before its own pre hooks, after its post hooks)
_global_pre_hooks: dict[int, Callable[..., Any]] = {}
_global_post_hooks: dict[int, Callable[..., Any]] = {}


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A hook ``hook(optimizer, args, kwargs)`` every optimizer's ``step`` runs first
    (``args`` start with the optimizer); it may return ``(new_args, new_kwargs)``.

    >>> h = ember.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: None)
    >>> h.remove()
    """
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A hook ``hook(optimizer, args, kwargs)`` every optimizer's ``step`` runs last.

    >>> h = ember.optim.optimizer.register_optimizer_step_post_hook(lambda o, a, k: None)
    >>> h.remove()
    """
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


class _Required:
    """Marks an option every parameter group must set (``SGD``'s ``lr`` in old PyTorch)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def _profiled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (an optimizer's ``step`` or ``zero_grad``) inside a profiler range named as
    PyTorch names it (``Optimizer.step#Adam.step``), so profiles and dispatch modes see the
    range's two ops where PyTorch's do; once per call, however many classes' ``step``
    run through ``super()``."""
    what = fn.__name__

    @functools.wraps(fn)
    def run(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        if self._in_range:
            return fn(self, *args, **kwargs)
        if what == "step":  # before its state is made: NOTE [compile side effects]
            side_effect(f"{type(self).__name__}.step() updates the parameters and its state")
        self._in_range = True
        try:
            with record_function(f"Optimizer.{what}#{type(self).__name__}.{what}"):
                if what != "step":
                    return fn(self, *args, **kwargs)
                return _hooked_step(fn, self, (self, *args), kwargs)
        finally:
            self._in_range = False

    return run


def _hooked_step(
    fn: Callable[..., Any], opt: Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``fn(*args, **kwargs)`` between the step hooks, in PyTorch's order: global pre hooks,
    the optimizer's pre hooks, the step, its post hooks, global post hooks."""
    pre = opt.__dict__.get("_step_pre_hooks")
    if _global_pre_hooks or pre:
        for hook in [*_global_pre_hooks.values(), *(pre or {}).values()]:
            result = hook(opt, args, kwargs)
            if result is None:
                continue
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(
                    f"{fn.__qualname__}: a step pre hook must return None or a tuple of "
                    f"(new_args, new_kwargs), but got {result!r}"
                )
            args, kwargs = result
    out = fn(*args, **kwargs)
    post = opt.__dict__.get("_step_post_hooks")
    if _global_post_hooks or post:
        for hook in [*(post or {}).values(), *_global_post_hooks.values()]:
            hook(opt, args, kwargs)
    return out


class Optimizer:
    """Base class of optimizers: holds ``param_groups`` (dicts of params and options) and
    ``state`` (per parameter); subclasses implement ``step``.

    >>> w = ember.nn.Parameter(ember.ones(2))
    >>> ember.optim.SGD([w], lr=0.1).param_groups[0]["lr"]
    0.1
    """

    #: a profiler range of ``step``/``zero_grad`` is open (see ``_profiled``)
    _in_range = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("step", "zero_grad"):
            if name in cls.__dict__:
                setattr(cls, name, _profiled(cls.__dict__[name]))

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_typename(params)}"
            )
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (unset ones take the defaults).

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1)
        >>> opt.add_param_group({"params": [ember.nn.Parameter(ember.ones(1))], "lr": 0.01})
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}"
                )
            if p.grad_fn is not None:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = {**param_group, "params": params}
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization parameter "
                    + name
                )
            group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )
        taken = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in taken for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """A hook ``hook(optimizer, args, kwargs)`` that ``step`` runs first; it may return
        ``(new_args, new_kwargs)`` for the step to use.

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1)
        >>> h = opt.register_step_pre_hook(lambda o, args, kwargs: print("step"))
        >>> opt.step()
        step
        >>> h.remove()
        """
        hooks = self.__dict__.setdefault("_step_pre_hooks", {})
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """A hook ``hook(optimizer, args, kwargs)`` that ``step`` runs after updating.

        >>> w = ember.nn.Parameter(ember.ones(1)); w.grad = ember.ones(1)
        >>> opt = ember.optim.SGD([w], lr=0.5)
        >>> h = opt.register_step_post_hook(lambda o, args, kwargs: print(w.item()))
        >>> opt.step()
        0.5
        """
        hooks = self.__dict__.setdefault("_step_post_hooks", {})
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: to ``None`` or, if not ``set_to_none``, to zeros.

        >>> ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1).zero_grad()
        """
        for group in self.param_groups:
            for p in group["params"]:
                _reset_grad(p, set_to_none)

    #: the per-group update over lists (NOTE [foreach updates]), for optimizers that have one
    _update_foreach: Callable[[dict[str, Any]], None] | None = None

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient once, by the optimizer's rule (its
        ``_update_group(group)``, by default ``_update(p, group)`` for each such parameter, or
        ``_update_foreach(group)`` for a group with ``foreach`` set); returns the closure's
        loss, if given.

        >>> w = ember.nn.Parameter(ember.ones(1)); w.grad = ember.ones(1)
        >>> ember.optim.Adam([w], lr=0.1).step(); w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
        """
        loss = self._eval_closure(closure)
        with ember.no_grad():
            for group in self.param_groups:
                if group.get("foreach") and self._update_foreach is not None:
                    self._update_foreach(group)
                else:
                    self._update_group(group)
        return loss

    def _update_group(self, group: dict[str, Any]) -> None:
        """Update each parameter of ``group`` that has a gradient (``_update``); an optimizer
        whose rule reads the group's hyperparameters once for all its parameters overrides it."""
        for p in group["params"]:
            if p.grad is not None:
                self._update(p, group)

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        """Update one parameter from its ``.grad``: the optimizer's rule (subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    @staticmethod
    def _grad(p: Tensor, group: dict[str, Any]) -> Tensor:
        """``p``'s gradient as an update rule uses it: negated under ``maximize``, plus
        ``weight_decay * p`` (L2 regularization); with ``decoupled_weight_decay`` (AdamW's rule)
        the parameter shrinks by ``lr * weight_decay`` instead and the gradient is left alone."""
        grad = -p.grad if group["maximize"] else p.grad  # type: ignore[operator]
        weight_decay = group.get("weight_decay", 0)
        if weight_decay != 0:
            if group.get("decoupled_weight_decay"):
                p.mul_(1 - group["lr"] * weight_decay)  # type: ignore[attr-defined]
            else:
                grad = grad.add(p, alpha=weight_decay)
        return grad  # type: ignore[no-any-return]

    @staticmethod
    def _grads(ps: list[Tensor], group: dict[str, Any]) -> list[Tensor]:
        """``_grad`` of each of ``ps`` (one device's), with one foreach op a step."""
        grads = [p.grad for p in ps]
        if group["maximize"]:
            grads = aten._foreach_neg.default(grads)
        weight_decay = group.get("weight_decay", 0)
        if weight_decay != 0:
            if group.get("decoupled_weight_decay"):
                aten._foreach_mul_.Scalar(ps, 1 - group["lr"] * weight_decay)
            else:
                grads = aten._foreach_add.List(grads, ps, alpha=weight_decay)
        return grads  # type: ignore[return-value]

    #: the 0-d float32 state tensors of the update rule (name: initial value), made by
    #: ``_init_state`` on a parameter's first step, before its buffers
    _state_scalars: ClassVar[dict[str, float]] = {"step": 0.0}
    #: the names of the rule's state buffers, zeros shaped like the parameter (``_buffer_names``)
    _state_buffers: ClassVar[tuple[str, ...]] = ()

    def _buffer_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        """The state buffers a parameter of ``group`` keeps: ``_state_buffers``, or, in an
        optimizer whose options add some (Adam's ``amsgrad``), what this override says."""
        return self._state_buffers

    def _init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``p``'s state, made on first use: the ``_state_scalars`` then, as zeros like ``p``,
        the buffers of ``_buffer_names(group)``, in that order."""
        state = self.state[p]
        if not state:
            for name, value in self._state_scalars.items():
                state[name] = ember.tensor(value, dtype=ember.float32)
            for name in self._buffer_names(group):
                state[name] = ember.zeros_like(p)
        return state

    def _begin_update(self, p: Tensor, group: dict[str, Any]) -> tuple[dict[str, Any], Tensor]:
        """The start of a single-tensor update: ``p``'s state (made if new) with its
        ``"step"`` counted, and the gradient the rule uses (``_grad``)."""
        state = self._init_state(p, group)
        state["step"].add_(1)
        return state, self._grad(p, group)

    def _with_grads(self, group: dict[str, Any]) -> list[tuple[list[Any], ...]]:
        """The group's parameters that have a gradient and their state (``_init_state``), split
        by device (``by_device``): what a foreach update walks."""
        params = [p for p in group["params"] if p.grad is not None]
        return by_device(params, [self._init_state(p, group) for p in params]) if params else []

    @staticmethod
    def _count_steps(states: list[dict[str, Any]]) -> list[Tensor]:
        """Add one to the ``"step"`` of each of ``states`` (one foreach op); return them."""
        steps = [st["step"] for st in states]
        aten._foreach_add_.Scalar(steps, 1)
        return steps

    def _eval_closure(self, closure: Callable[[], Any] | None) -> Any:
        """Re-evaluate the loss (with grad mode on) when ``step`` was given a closure."""
        if closure is None:
            return None
        with ember.enable_grad():
            return closure()

    # ------------------------------------------------------------------ state dict
    def state_dict(self) -> dict[str, Any]:
        """This optimizer's state and options (NOTE [optimizer state_dict layout]).

        >>> sorted(ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1).state_dict())
        ['param_groups', 'state']
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore state and options saved by ``state_dict`` (same parameter layout).

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1)
        >>> opt.load_state_dict(opt.state_dict())
        """
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, saved in zip(self.param_groups, saved_groups, strict=True):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size of "
                    "optimizer's group"
                )
        by_index = {
            i: p
            for mine, saved in zip(self.param_groups, saved_groups, strict=True)
            for i, p in zip(saved["params"], mine["params"], strict=True)
        }
        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for i, values in state_dict["state"].items():
            p = by_index.get(i)
            if p is None:
                state[i] = copy.deepcopy(values)  # type: ignore[index]  # as PyTorch: kept by key
                continue
            state[p] = {k: _cast_state(p, k, v) for k, v in values.items()}
        self.state = state
        self.param_groups = [
            {**saved, "params": mine["params"]}
            for mine, saved in zip(self.param_groups, saved_groups, strict=True)
        ]

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"


def by_device(params: list[Tensor], *lists: list[Any]) -> list[tuple[list[Any], ...]]:
    """``params`` and the lists that go with them (gradients, state), split by device, in
    order: a foreach op runs on the tensors of one device."""
    if len({marks.backend_keys(p) for p in params}) <= 1:
        return [(params, *lists)]
    groups: dict[int, tuple[list[Any], ...]] = {}
    for i, p in enumerate(params):
        g = groups.setdefault(marks.backend_keys(p), tuple([] for _ in range(len(lists) + 1)))
        g[0].append(p)
        for dst, src in zip(g[1:], lists, strict=True):
            dst.append(src[i])
    return list(groups.values())


Optimizer.step = _profiled(Optimizer.step)  # type: ignore[method-assign]
Optimizer.zero_grad = _profiled(Optimizer.zero_grad)  # type: ignore[method-assign]


def _cast_state(p: Tensor, key: str, value: Any) -> Any:
    """A fresh copy of one loaded state value, cast like the parameter it belongs to."""
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    with ember.no_grad():
        if key != "step" and p.is_floating_point() and value.is_floating_point():
            return value.to(dtype=p.dtype, device=p.device, copy=True)  # type: ignore[attr-defined]
        return value.clone()  # type: ignore[attr-defined]


def as_real(tensors: list[Tensor]) -> list[Tensor]:
    """``tensors`` with each complex one replaced by its real view (``view_as_real``): as in
    PyTorch, an optimizer updates a complex parameter as pairs of real numbers."""
    if not any(t.is_complex() for t in tensors):
        return tensors
    return [ember.view_as_real(t) if t.is_complex() else t for t in tensors]


def update_moments(
    exp_avg: Tensor, exp_avg_sq: Tensor, grad: Tensor, betas: tuple[float, float]
) -> None:
    """Adam's running moments, in place: ``exp_avg`` moves ``1 - beta1`` of the way to
    ``grad``; ``exp_avg_sq`` becomes ``beta2 * exp_avg_sq + (1 - beta2) * grad**2``."""
    beta1, beta2 = betas
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)


def update_moments_foreach(
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    grads: list[Tensor],
    betas: tuple[float, float],
) -> None:
    """``update_moments`` of lists of tensors, with one foreach op a step."""
    beta1, beta2 = betas
    aten._foreach_lerp_.Scalar(exp_avgs, grads, 1 - beta1)
    aten._foreach_mul_.Scalar(exp_avg_sqs, beta2)
    aten._foreach_addcmul_.Scalar(exp_avg_sqs, grads, grads, 1 - beta2)


def adam_moments(
    p: Tensor, grad: Tensor, state: dict[str, Any], betas: tuple[float, float]
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The start of an Adam-family update (Adam, RAdam, NAdam) of one parameter: ``p``,
    ``grad`` and the state's ``exp_avg`` and ``exp_avg_sq`` as real views (``as_real``), the
    moments updated with ``grad`` (``update_moments``)."""
    p, grad, exp_avg, exp_avg_sq = as_real([p, grad, state["exp_avg"], state["exp_avg_sq"]])
    update_moments(exp_avg, exp_avg_sq, grad, betas)
    return p, grad, exp_avg, exp_avg_sq


def adam_moments_foreach(
    ps: list[Tensor],
    grads: list[Tensor],
    states: list[dict[str, Any]],
    betas: tuple[float, float],
) -> tuple[list[Tensor], list[Tensor], list[Tensor], list[Tensor]]:
    """``adam_moments`` of lists of parameters (one device's), with one foreach op a step."""
    ps, grads = as_real(ps), as_real(grads)  # a complex parameter as real pairs
    exp_avgs = as_real([st["exp_avg"] for st in states])
    exp_avg_sqs = as_real([st["exp_avg_sq"] for st in states])
    update_moments_foreach(exp_avgs, exp_avg_sqs, grads, betas)
    return ps, grads, exp_avgs, exp_avg_sqs


def refuse_unsupported(optimizer: str, **options: Any) -> None:
    """Raise ``NotImplementedError`` naming the options that were set among PyTorch's CUDA-only
    (``capturable``, ``fused``) and differentiate-through-the-step (``differentiable``) ones."""
    used = [name for name, value in options.items() if value]
    if used:
        raise NotImplementedError(
            f"{optimizer}: {', '.join(name + '=True' for name in used)} is not supported by "
            "ember; leave it unset (the default update gives the same values)"
        )
