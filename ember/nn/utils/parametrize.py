"""Parametrizations, as PyTorch's ``torch.nn.utils.parametrize``: a tensor attribute of a
module computed by modules from other tensors on every access.

# NOTE [parametrized modules]
``register_parametrization(module, "weight", p)`` moves ``module.weight`` into
``module.parametrizations.weight`` (a ``ParametrizationList``) as ``original`` (or
``original0``, ``original1``, ... when ``p.right_inverse`` returns several tensors), gives the
module a class of its own, ``Parametrized<Class>``, and puts a property ``weight`` on that class
which runs the list (``p(original)``, then each later parametrization on the result).
Assigning ``module.weight = x`` runs the ``right_inverse`` methods backwards and stores the
result in the originals. The state_dict keys are PyTorch's
(``parametrizations.weight.original0``), so state_dicts load across libraries.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from copy import deepcopy
from typing import Any

import ember
from ember._tensor import Tensor
from ember.nn.modules.container import ModuleDict, ModuleList
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "type_before_parametrizations",
]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Within the block, each parametrized tensor is computed once and reused.

    >>> with ember.nn.utils.parametrize.cached():
    ...     pass
    """
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module: Module, name: str, x: Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """Make ``dest`` hold ``src``'s values (keeping ``dest`` the same object, so optimizers
    that hold it keep working)."""
    dest.data = src.detach() if src.requires_grad else src  # type: ignore[attr-defined]


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and the original tensor(s) they start from.

    >>> lin = ember.nn.Linear(2, 2)
    >>> class Double(ember.nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> _ = ember.nn.utils.parametrize.register_parametrization(lin, "weight", Double())
    >>> type(lin.parametrizations.weight).__name__
    'ParametrizationList'
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original.shape), original.dtype
        with ember.no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype is not original.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: "
                    f"{new.dtype}"
                )
            with ember.no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                        f"tuple...). Got element {i} of the sequence with type "
                        f"{type(part).__name__}."
                    )
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)  # type: ignore[attr-defined]
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype is not dtype or tuple(z.shape) != shape:
                raise ValueError(
                    "Registering a parametrization may not change the dtype or shape of the "
                    "tensor, unless `unsafe` flag is enabled.\n"
                    f"unparametrized: {dtype} {list(shape)}\nparametrized: {z.dtype} "
                    f"{list(z.shape)}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` in the originals, through each ``right_inverse`` in reverse."""
        with ember.no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype is not self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                        f"`original` has dtype {self.original.dtype}"
                    )
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors. Got "
                        f"{type(value).__name__}."
                    )
                if len(value) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of length {len(value)}."
                    )
                for i, part in enumerate(value):
                    _maybe_set(getattr(self, f"original{i}"), part)

    def forward(self) -> Tensor:  # type: ignore[override]
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x  # type: ignore[no-any-return]


def _inject_new_class(module: Module) -> None:
    """Give ``module`` a class of its own (NOTE [parametrized modules])."""
    cls = module.__class__

    def getstate(self: Module) -> Any:
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict()."
        )

    def default_deepcopy(self: Module, memo: dict[int, Any]) -> Module:
        found = memo.get(id(self))
        if found is not None:
            return found  # type: ignore[no-any-return]
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        return replica

    namespace: dict[str, Any] = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    def get(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()  # type: ignore[no-any-return]
        key = (id(self), tensor_name)
        found = _cache.get(key)
        if found is None:
            found = _cache[key] = parametrization()
        return found

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get, set_))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` (or its tensor ``tensor_name``) has a parametrization.

    >>> ember.nn.utils.parametrize.is_parametrized(ember.nn.Linear(2, 2))
    False
    """
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Compute ``module.<tensor_name>`` by ``parametrization`` from now on (NOTE
    [parametrized modules]); registering a second one on the same tensor chains it.

    >>> class Sym(ember.nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).t()
    >>> lin = ember.nn.utils.parametrize.register_parametrization(ember.nn.Linear(2, 2),
    ...                                                           "weight", Sym())
    >>> bool((lin.weight == lin.weight.t()).all())
    True
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype is not y.dtype or tuple(x.shape) != tuple(y.shape):
                raise ValueError(
                    "Registering a parametrization may not change the dtype or shape of the "
                    "tensor, unless the `unsafe` flag is enabled."
                )
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = parametrizations
        _inject_property(module, tensor_name)
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
            f"with name '{tensor_name}'"
        )
    return module


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Undo ``register_parametrization``: ``tensor_name`` becomes a plain parameter (or buffer)
    again, holding the parametrized value (or the original with ``leave_parametrized=False``).

    >>> class Double(ember.nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> P = ember.nn.utils.parametrize
    >>> lin = P.register_parametrization(ember.nn.Linear(2, 2), "weight", Double())
    >>> type(P.remove_parametrizations(lin, "weight")).__name__
    'Linear'
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with ember.no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        t = getattr(module, tensor_name)  # with grad: does any original require it?
        original = Parameter(t.detach(), True) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization was registered.

    >>> ember.nn.utils.parametrize.type_before_parametrizations(ember.nn.Linear(1, 1)).__name__
    'Linear'
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)
