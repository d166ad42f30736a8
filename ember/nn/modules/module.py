"""``nn.Module``: the base class of layers and models.

A module keeps three ordered registries beside its ordinary attributes: ``_parameters``
(``Parameter`` or ``None``), ``_buffers`` (``Tensor`` or ``None``) and ``_modules`` (child
modules). ``__setattr__`` routes values into them by type and ``__getattr__`` reads them back,
so ``self.weight = Parameter(...)`` registers and ``self.weight`` finds it.

# NOTE [module state_dict keys]
Keys are dotted paths: ``"<child>.<grandchild>.<name>"``. Parameters come before buffers at
each level, then the children in registration order, as in PyTorch, so ``state_dict()`` of
the same model in both libraries lists the same keys in the same order.
"""

from __future__ import annotations

import functools
import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import ember
from ember._graph_break import USER_CODE, side_effect
from ember._tensor import Tensor
from ember.device import device as _device
from ember.dtypes import dtype as _dtype
from ember.nn.modules._backward_hook import BackwardHook
from ember.nn.parameter import Parameter
from ember.utils.hooks import RemovableHandle

__all__ = [
    "Module",
    "RemovableHandle",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
]

# NOTE [global module hooks]
# ``register_module_forward_pre_hook`` / ``register_module_forward_hook`` add hooks every
# module runs, before its own (PyTorch's order); while none is registered a call pays one
# truth test of ``_GLOBAL_HOOKS``. Global hooks take ``(module, args)`` and
# ``(module, args, output)``, as PyTorch's.
_GLOBAL_FORWARD_PRE_HOOKS: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_GLOBAL_FORWARD_HOOKS: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_GLOBAL_HOOKS = [0]  # how many global hooks exist


def _count_global_hooks() -> None:
    _GLOBAL_HOOKS[0] = len(_GLOBAL_FORWARD_PRE_HOOKS) + len(_GLOBAL_FORWARD_HOOKS)


class _GlobalHandle:
    """Removes one global hook (``handle.remove()``, or a with-block's end)."""

    def __init__(self, table: OrderedDict[int, Callable[..., Any]], hook_id: int) -> None:
        self._hooks, self.id = table, hook_id

    def remove(self) -> None:
        self._hooks.pop(self.id, None)
        _count_global_hooks()

    def __enter__(self) -> _GlobalHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


_GLOBAL_IDS = itertools.count()


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> _GlobalHandle:
    """Call ``hook(module, args)`` before every module's forward (a non-None result
    replaces the positional arguments) (NOTE [global module hooks]).

    >>> h = ember.nn.modules.module.register_module_forward_pre_hook(lambda m, a: None)
    >>> h.remove()
    """
    i = next(_GLOBAL_IDS)
    _GLOBAL_FORWARD_PRE_HOOKS[i] = hook
    _count_global_hooks()
    return _GlobalHandle(_GLOBAL_FORWARD_PRE_HOOKS, i)


def register_module_forward_hook(hook: Callable[..., Any]) -> _GlobalHandle:
    """Call ``hook(module, args, output)`` after every module's forward (a non-None result
    replaces the output) (NOTE [global module hooks])."""
    i = next(_GLOBAL_IDS)
    _GLOBAL_FORWARD_HOOKS[i] = hook
    _count_global_hooks()
    return _GlobalHandle(_GLOBAL_FORWARD_HOOKS, i)


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns: keys the model wanted but the dict lacked, and
    keys the dict had that the model does not."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )

    __str__ = __repr__


def _typename(obj: Any) -> str:
    cls = type(obj)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def _addindent(text: str, spaces: int) -> str:
    """Indent every line of ``text`` but the first by ``spaces`` (nested reprs)."""
    first, *rest = text.split("\n")
    if not rest:
        return text
    pad = " " * spaces
    return "\n".join([first, *(pad + line for line in rest)])


#: bumped whenever any module registers, replaces or removes a parameter, buffer or child
#: module through its methods or attributes (``ember.compile`` caches where a compiled
#: module's tensors live and re-reads the tree only when this changed)
STRUCTURE = [0]


def _check_name(kind: str, name: Any, owner: Module, registry: dict[str, Any]) -> None:
    """The checks PyTorch makes on a parameter / buffer / module name before registering."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        suffix = f", got: {name}" if kind == "module" else ""
        raise KeyError(f'{kind} name can\'t contain "."{suffix}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(owner, name) and name not in registry:
        raise KeyError(f"attribute '{name}' already exists")


#: the hook registries ``Module.__init__`` makes beyond the forward ones
_HOOK_DICTS = (
    "_backward_pre_hooks", "_backward_hooks", "_state_dict_pre_hooks", "_state_dict_hooks",
    "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
)  # fmt: skip


class Module:
    """Base class of all layers and models: subclass it, set layers and parameters as
    attributes in ``__init__``, and compute the output in ``forward``.

    >>> class Net(ember.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = ember.nn.Parameter(ember.ones(1))
    ...     def forward(self, x):
    ...         return x * self.scale
    >>> Net()(ember.ones(2)).shape
    ember.Size([2])
    """

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _modules: dict[str, Module | None]
    _version: int = 1  # PyTorch's state_dict metadata version for Module

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments; Module.__init__ "
                "takes none (pass them to your subclass's own __init__)"
            )
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks_always_called", {})
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_is_full_backward_hook", None)
        setattr_(self, "_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_state_dict_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; every subclass defines it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ------------------------------------------------------------------ registration
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under ``name`` (``None`` reserves the name with no value).

        >>> m = ember.nn.Module(); m.register_parameter("w", ember.nn.Parameter(ember.ones(1)))
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self, self._parameters)
        STRUCTURE[0] += 1
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(ember.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter; ``persistent=False`` leaves it out
        of ``state_dict()``.

        >>> m = ember.nn.Module(); m.register_buffer("count", ember.zeros(1))
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self, self._buffers)
        STRUCTURE[0] += 1
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(ember Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``; it is then reachable as an attribute.

        >>> m = ember.nn.Module(); m.add_module("inner", ember.nn.Module())
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name("module", name, self, self._modules)
        STRUCTURE[0] += 1
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The module at dotted path ``target`` ("" is this module).

        >>> ember.nn.Sequential(ember.nn.Module()).get_submodule("0")
        Module()
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def _owner_of(self, target: str) -> tuple[Module, str]:
        """The submodule holding the attribute at dotted path ``target``, and the attribute's
        name: what ``get_parameter`` and ``get_buffer`` look up, an AttributeError if absent."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        return mod, name

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``.

        >>> ember.nn.Sequential(ember.nn.Linear(2, 3)).get_parameter("0.bias").shape
        ember.Size([3])
        """
        mod, name = self._owner_of(target)
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``.

        >>> ember.nn.Sequential(ember.nn.BatchNorm1d(3)).get_buffer("0.running_mean")
        tensor([0., 0., 0.])
        """
        mod, name = self._owner_of(target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    # ------------------------------------------------------------------ attributes
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            found = d.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if USER_CODE[0]:  # NOTE [compile side effects]: state the graph would not replay
            side_effect(f"the function sets {type(self).__name__}.{name} (a module's state)")
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(ember.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            STRUCTURE[0] += 1
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(ember.nn.Module or None expected)"
                )
            STRUCTURE[0] += 1
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(ember.Tensor or None expected)"
                )
            if value is None or buffers[name] is None:
                STRUCTURE[0] += 1
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Drop ``name`` from every place but registry ``keep`` (it is being re-registered)."""
        self.__dict__.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                self.__dict__[registry].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in d[registry]:
                STRUCTURE[0] += 1
                del d[registry][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        names = set(dir(type(self))) | set(self.__dict__)
        names |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(n for n in names if not n[:1].isdigit())

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_DICTS:  # modules pickled before these hooks existed
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # ------------------------------------------------------------------ traversal
    def _named_members(
        self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        owners = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for owner_prefix, owner in owners:
            for name, value in getattr(owner, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{owner_prefix}.{name}" if owner_prefix else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs of this module and, if ``recurse``, its descendants.

        >>> [n for n, _ in ember.nn.Sequential(ember.nn.Linear(2, 2)).named_parameters()]
        ['0.weight', '0.bias']
        """
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters (each once), e.g. to hand to an optimizer.

        >>> len(list(ember.nn.Linear(2, 3).parameters()))
        2
        """
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs, like ``named_parameters``."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers (each once)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for each direct child, each module once."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct children, each once."""
        for _, module in self.named_children():
            yield module

    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) for this module ("" or ``prefix``) and every descendant.

        >>> [n for n, _ in ember.nn.Sequential(ember.nn.Module()).named_modules()]
        ['', '0']
        """
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            child_prefix = f"{prefix}.{name}" if prefix else name
            yield from module.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every descendant, each once."""
        for _, module in self.named_modules():
            yield module

    __hash__ = object.__hash__

    # ------------------------------------------------------------------ modes
    def train(self, mode: bool = True) -> Module:
        """Set training mode here and in every descendant; returns self.

        >>> ember.nn.Module().train(False).training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode (``train(False)``); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter; returns self (freeze with ``False``)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to ``None`` or, if not ``set_to_none``,
        to zeros in place.

        >>> ember.nn.Linear(2, 2).zero_grad()
        """
        for p in self.parameters():
            _reset_grad(p, set_to_none)

    # ------------------------------------------------------------------ conversion
    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace every parameter's and buffer's values by ``fn`` of them, in place (so
        parameter objects, and optimizers that hold them, stay valid)."""
        for module in self.children():
            module._apply(fn)
        with ember.no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                p.data = fn(p)
                if p.grad is not None:
                    p.grad.data = fn(p.grad)
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = fn(b)
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every descendant (children first) and on self; returns self.

        >>> ember.nn.Sequential(ember.nn.Module()).apply(lambda m: None)[0]
        Module()
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``. Only floating and complex values change dtype.

        >>> ember.nn.Linear(2, 2).to(ember.float64).weight.dtype
        ember.float64
        """
        dev, dt = _parse_to(*args, **kwargs)
        if dt is not None and not (dt.is_floating_point or dt.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dt}"
            )

        def convert(t: Tensor) -> Tensor:
            cast = dt if t.is_floating_point() or t.is_complex() else None
            return t.to(device=dev, dtype=cast)  # type: ignore[attr-defined]

        return self._apply(convert)

    def float(self) -> Module:
        """Cast floating parameters and buffers to float32; returns self."""
        return self._cast(ember.float32)

    def double(self) -> Module:
        """Cast floating parameters and buffers to float64; returns self."""
        return self._cast(ember.float64)

    def half(self) -> Module:
        """Cast floating parameters and buffers to float16; returns self."""
        return self._cast(ember.float16)

    def cpu(self) -> Module:
        """Move parameters and buffers to the cpu device; returns self."""
        return self._apply(lambda t: t.to(device=_device("cpu")))  # type: ignore[attr-defined]

    def cuda(self, device: Any = None) -> Module:
        """Move parameters and buffers to a CUDA device: ember has none, so a module holding
        any raises as PyTorch's CPU-only build does (NOTE [unavailable devices]).

        >>> ember.nn.ReLU().cuda()  # no tensors to move
        ReLU()
        """
        return self._apply(lambda t: t.cuda(device))  # type: ignore[attr-defined]

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Move parameters and buffers to ``device`` without copying their values (each
        becomes ``empty_like`` there: uninitialised); returns self.

        >>> ember.nn.Linear(2, 3).to_empty(device="cpu").weight.shape
        ember.Size([3, 2])
        """
        dev = _device(device) if device is not None else None
        if not recurse:
            with ember.no_grad():
                for p in self._parameters.values():
                    if p is not None:
                        p.data = ember.empty_like(p, device=dev)
                for name, b in self._buffers.items():
                    if b is not None:
                        self._buffers[name] = ember.empty_like(b, device=dev)
            return self
        return self._apply(lambda t: ember.empty_like(t, device=dev))

    def _cast(self, dt: _dtype) -> Module:
        return self._apply(lambda t: t.to(dtype=dt) if t.is_floating_point() else t)  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ calling
    def compile(self, *args: Any, **kwargs: Any) -> None:
        """This module's ``forward`` compiled in place with ``ember.compile(self, **kwargs)``
        (PyTorch's ``Module.compile``); its hooks still run around it, eagerly.

        >>> lin = ember.nn.Linear(3, 2)
        >>> lin.compile(backend="aot_eager")
        >>> lin(ember.ones(1, 3)).shape
        ember.Size([1, 2])
        """
        if kwargs.get("disable"):
            return
        compiled = ember.compile(self, *args, _forward_only=True, **kwargs)
        object.__setattr__(self, "forward", compiled)  # (not a submodule: no registration)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _GLOBAL_HOOKS[0]
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        full = self._is_full_backward_hook
        bw_hook = None
        if self._backward_pre_hooks or (self._backward_hooks and full):
            bw_hook = BackwardHook(
                self, list(self._backward_hooks.values()), list(self._backward_pre_hooks.values())
            )
        for hook in list(_GLOBAL_FORWARD_PRE_HOOKS.values()):
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {res}."
                        )
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        if bw_hook is not None:
            args = bw_hook.setup_input_hook(args)
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called:
                    self._run_forward_hook(hook_id, hook, args, kwargs, None)
            raise
        for hook in list(_GLOBAL_FORWARD_HOOKS.values()):
            res = hook(self, args, result)
            if res is not None:
                result = res
        for hook_id, hook in list(self._forward_hooks.items()):
            res = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            if res is not None:
                result = res
        if bw_hook is not None:
            result = bw_hook.setup_output_hook(result)
        elif self._backward_hooks and full is False:
            self._attach_legacy_backward_hooks(result)
        return result

    def _attach_legacy_backward_hooks(self, result: Any) -> None:
        """``register_backward_hook``'s hooks go on the node that made the (first tensor
        of the) output, as PyTorch's: they see that node's gradients, not the module's."""
        var = result
        while not isinstance(var, Tensor):
            if isinstance(var, dict):
                var = next(v for v in var.values() if isinstance(v, Tensor))
            else:
                var = var[0]
        node = var.grad_fn
        if node is None:
            return
        for hook in self._backward_hooks.values():
            node.register_hook(functools.partial(_call_legacy_hook, hook, self))

    def _run_forward_hook(
        self, hook_id: int, hook: Callable[..., Any], args: Any, kwargs: Any, result: Any
    ) -> Any:
        if hook_id in self._forward_hooks_with_kwargs:
            return hook(self, args, kwargs, result)
        return hook(self, args, result)

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` before ``forward``; a non-None result replaces the
        positional arguments (with ``with_kwargs``: ``hook(module, args, kwargs)`` returning
        ``(args, kwargs)``).

        >>> h = ember.nn.Module().register_forward_pre_hook(lambda m, a: None); h.remove()
        """
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after ``forward``; a non-None result replaces
        the output (with ``with_kwargs``: ``hook(module, args, kwargs, output)``).

        >>> h = ember.nn.Module().register_forward_hook(lambda m, a, o: None); h.remove()
        """
        handle = RemovableHandle(
            self._forward_hooks, self._forward_hooks_with_kwargs, self._forward_hooks_always_called
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _check_hook_kind(self, full: bool) -> None:
        if self._is_full_backward_hook is (not full) and self._backward_hooks:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        self._is_full_backward_hook = full

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of this module's outputs
        are known; a non-None result replaces them (NOTE [module full backward hooks]).

        >>> m = ember.nn.Linear(2, 1)
        >>> h = m.register_full_backward_pre_hook(lambda mod, g: (g[0] * 2,))
        >>> m(ember.ones(1, 2)).sum().backward(); m.bias.grad
        tensor([2.])
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` once the gradients of this
        module's inputs are computed; a non-None result replaces ``grad_input``.

        >>> m = ember.nn.Linear(2, 1); seen = []
        >>> h = m.register_full_backward_hook(lambda mod, gi, go: seen.append(gi[0].shape))
        >>> m(ember.ones(3, 2, requires_grad=True)).sum().backward(); seen
        [ember.Size([3, 2])]
        """
        self._check_hook_kind(True)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """The deprecated form: ``hook(module, grad_input, grad_output)`` on the autograd
        node that made the output, whose inputs need not be the module's (prefer
        ``register_full_backward_hook``).

        >>> m = ember.nn.Linear(2, 1); seen = []
        >>> h = m.register_backward_hook(lambda mod, gi, go: seen.append(len(gi)))
        >>> m(ember.ones(1, 2)).sum().backward(); seen
        [3]
        """
        self._check_hook_kind(False)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    # ------------------------------------------------------------------ state dict
    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before this module's entries are written
        by ``state_dict``.

        >>> h = ember.nn.Linear(1, 1).register_state_dict_pre_hook(lambda m, p, k: None)
        """
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after this module and
        its children are written; it may change ``state_dict`` in place, returning None.

        >>> m = ember.nn.Linear(1, 1)
        >>> h = m.register_state_dict_post_hook(lambda m, sd, p, md: sd.__delitem__(p + "bias"))
        >>> list(m.state_dict())
        ['weight']
        """
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = (hook, True)
        return handle

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """PyTorch's older (private, widely used) form of ``register_state_dict_post_hook``:
        ``hook(module, state_dict, prefix, local_metadata)`` may also return a new state
        dict, which replaces the one being written.

        >>> m = ember.nn.Linear(1, 1)
        >>> h = m._register_state_dict_hook(lambda m, sd, p, md: {"w": sd[p + "weight"]})
        >>> list(m.state_dict())
        ['w']
        """
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = (hook, False)
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its entries (it may rename
        keys of ``state_dict`` in place, as a converter of old checkpoints does).

        >>> h = ember.nn.Linear(1, 1).register_load_state_dict_pre_hook(lambda *a: None)
        """
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict`` loaded every
        module; it may edit the missing and unexpected key lists in place (before
        ``strict`` checks them), returning None.

        >>> h = ember.nn.Linear(1, 1).register_load_state_dict_post_hook(lambda m, k: None)
        """
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def state_dict(
        self, *, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name (NOTE [module state_dict keys]),
        detached unless ``keep_vars``.

        >>> list(ember.nn.Linear(2, 3).state_dict())
        ['weight', 'bias']
        """
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        with ember.no_grad():
            return self._state_dict_into(destination, prefix, keep_vars)

    def _state_dict_into(self, destination: Any, prefix: str, keep_vars: bool) -> Any:
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        metadata = getattr(destination, "_metadata", None)
        local_metadata = {"version": self._version}
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module._state_dict_into(destination, f"{prefix}{name}.", keep_vars)
        for hook, public in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is None:
                continue
            if public:
                raise RuntimeError(
                    "state_dict post-hook must return None; change the state_dict in place"
                )
            destination = result  # the private form may replace it
        return destination

    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        """Write this module's own parameters and persistent buffers (not its children's)."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()  # type: ignore[attr-defined]
        skip = self._non_persistent_buffers_set
        for name, b in self._buffers.items():
            if b is not None and name not in skip:
                destination[prefix + name] = b if keep_vars else b.detach()  # type: ignore[attr-defined]
        extra = type(self).get_extra_state is not Module.get_extra_state
        if extra:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """Extra picklable-free state to store in ``state_dict`` (override with
        ``set_extra_state``)."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called; "
            "override get_extra_state and set_extra_state together"
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore what ``get_extra_state`` returned."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called; "
            "override get_extra_state and set_extra_state together"
        )

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module; returns the
        missing and unexpected keys (``strict=True`` raises RuntimeError if there are any).

        >>> m = ember.nn.Linear(2, 2); m.load_state_dict(m.state_dict())
        <All keys matched successfully>
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        if self._has_load_hooks():
            state_dict = OrderedDict(state_dict)  # pre-hooks may edit it: not the caller's
            if metadata is not None:
                state_dict._metadata = metadata  # type: ignore[attr-defined]
        modules = list(self.named_modules(remove_duplicate=False))
        for name, module in modules:
            head = name + "." if name else ""
            if module._load_state_dict_pre_hooks:
                local = {} if metadata is None else metadata.get(name, {})
                for hook in module._load_state_dict_pre_hooks.values():
                    hook(module, state_dict, head, local, strict, missing, unexpected, errors)
            module._load_from_state_dict(state_dict, head, assign, missing, unexpected, errors)
        keys = _IncompatibleKeys(missing, unexpected)
        for _, module in reversed(modules):  # children before parents, as PyTorch's recursion
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise RuntimeError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace."
                    )
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    def _has_load_hooks(self) -> bool:
        return any(m._load_state_dict_pre_hooks for m in self.modules())

    def _load_from_state_dict(
        self,
        state_dict: Mapping[str, Any],
        prefix: str,
        assign: bool,
        missing: list[str],
        unexpected: list[str],
        errors: list[str],
    ) -> None:
        """Load this module's own entries (keys ``prefix + name``); record the rest."""
        skip = self._non_persistent_buffers_set
        local: dict[str, Tensor] = {k: v for k, v in self._parameters.items() if v is not None}
        local.update((k, v) for k, v in self._buffers.items() if v is not None and k not in skip)
        for name, current in local.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected ember.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if current.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = value[0]  # PyTorch accepts 1-element vectors for 0-dim entries
            if value.shape != current.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {current.shape}."
                )
                continue
            try:
                with ember.no_grad():
                    if assign:
                        self._assign(name, current, value)
                    else:
                        current.copy_(value)  # type: ignore[attr-defined]
            except Exception as ex:  # noqa: BLE001 - reported like PyTorch, with the cause
                errors.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {current.shape} and whose dimensions in the checkpoint are "
                    f"{value.shape}, an exception occurred : {ex.args}."
                )
        extra_key = prefix + "_extra_state"
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        if has_extra:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            else:
                missing.append(extra_key)
        for key in state_dict:
            if not key.startswith(prefix) or (has_extra and key == extra_key):
                continue
            first, dot, _ = key[len(prefix) :].partition(".")
            if (dot and first not in self._modules) or (not dot and first not in local):
                unexpected.append(key)

    def _assign(self, name: str, current: Tensor, value: Tensor) -> None:
        if name in self._parameters:
            rg = current.requires_grad
            self._parameters[name] = value if isinstance(value, Parameter) else Parameter(value, rg)
        else:
            self._buffers[name] = value

    # ------------------------------------------------------------------ printing
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text shown inside this module's parentheses in ``repr`` (override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): {_addindent(repr(module), 2)}" for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


def _call_legacy_hook(
    hook: Callable[..., Any], module: Module, grad_inputs: Any, grad_outputs: Any
) -> Any:  # noqa: E501
    return hook(module, grad_inputs, grad_outputs)


def _reset_grad(p: Tensor, set_to_none: bool) -> None:
    """Set ``p.grad`` to ``None``, or zero it in place (detached from any graph)."""
    g = p.grad
    if g is None:
        return
    if set_to_none:
        p.grad = None
        return
    if g.grad_fn is not None:
        g.detach_()  # type: ignore[attr-defined]
    else:
        g.requires_grad_(False)
    g.zero_()  # type: ignore[attr-defined]


def _parse_to(*args: Any, **kwargs: Any) -> tuple[_device | None, _dtype | None]:
    """(device, dtype) named by the arguments of ``Module.to`` / ``Tensor.to``."""
    dev = kwargs.pop("device", None)
    dt = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, _dtype):
            dt = a
        elif isinstance(a, Tensor):
            dev, dt = a.device, a.dtype
        elif isinstance(a, (str, _device)):
            dev = _device(a)
        elif isinstance(a, bool):
            continue  # non_blocking
        else:
            raise TypeError(
                f"to() received an invalid argument {a!r}: expected a device, a dtype, or a tensor"
            )
    return (_device(dev) if dev is not None else None), dt
