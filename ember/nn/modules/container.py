"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict``. Children are registered under their index (``"0"``, ``"1"``, ...) or key,
so ``state_dict`` keys read ``"0.weight"`` as in PyTorch."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Self

from ember._tensor import Tensor
from ember.nn.modules.module import Module, _addindent
from ember.nn.parameter import Parameter

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _index(idx: Any, n: int, what: str) -> int:
    """``idx`` as a position in ``[0, n)``; IndexError naming the container otherwise."""
    i = operator.index(idx)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for {what} of length {n}")
    return i % n


class _Indexed(Module):
    """What ``Sequential`` and ``ModuleList`` share: children registered as ``"0"``, ``"1"``..."""

    def _renumber(self, modules: Iterable[Any]) -> None:
        # PyTorch renumbers so indices stay 0..n-1
        items = list(modules)
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(items))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())  # type: ignore[arg-type]

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, module: Module) -> Self:
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove and return the module at ``key``."""
        v = self[key]  # type: ignore[index]
        del self[key]  # type: ignore[attr-defined]
        return v  # type: ignore[no-any-return]


class Sequential(_Indexed):
    """Modules applied in order, each to the previous one's output.

    >>> net = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU())
    >>> net(ember.ones(1, 2)).shape
    ember.Size([1, 3])
    """

    def __init__(self, *args: Module | OrderedDict[str, Module]) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        return self._modules[keys[_index(idx, len(keys), "Sequential")]]

    def __setitem__(self, idx: int, module: Module) -> None:
        keys = list(self._modules)
        setattr(self, keys[_index(idx, len(keys), "Sequential")], module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        doomed = (
            keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), "Sequential")]]
        )
        for key in doomed:
            del self._modules[key]
        self._renumber(self._modules.values())

    def extend(self, modules: Iterable[Module]) -> Sequential:
        """Append each of ``modules``; returns self."""
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put ``module`` at position ``index``, shifting later ones; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index %= n + 1
        items = list(self._modules.values())
        items.insert(index, module)
        self._renumber(items)
        return self

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's parameter name
        for module in self._modules.values():
            input = module(input)  # type: ignore[misc]  # noqa: A001
        return input


class ModuleList(_Indexed):
    """A list of modules, registered so their parameters are found; no ``forward``.

    >>> layers = ember.nn.ModuleList([ember.nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(layers.parameters()))
    6
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])  # type: ignore[arg-type]
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                del self._modules[str(k)]
        else:
            del self._modules[str(_index(idx, len(self), "ModuleList"))]
        self._renumber(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append each of ``modules``; returns self."""
        if isinstance(modules, (Module, str)) or not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index``."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._renumber(items)

    def __repr__(self) -> str:
        # Runs of modules with identical reprs print once, as "(first-last): n x ...".
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        lines: list[str] = []
        start = 0
        for i in range(1, len(reprs) + 1):
            if i < len(reprs) and reprs[i] == reprs[start]:
                continue
            body = _addindent(reprs[start], 2)
            count = i - start
            label = f"({start})" if count == 1 else f"({start}-{i - 1}): {count} x"
            lines.append(f"{label}: {body}" if count == 1 else f"{label} {body}")
            start = i
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class _Keyed(Module):
    """What ``ModuleDict`` and ``ParameterDict`` share: a dict-like view of ``_entries``."""

    @property
    def _entries(self) -> dict[str, Any]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def keys(self) -> Iterable[str]:
        return self._entries.keys()

    def pop(self, key: str) -> Any:
        """Remove and return the entry under ``key``."""
        v = self[key]  # type: ignore[index]
        del self[key]  # type: ignore[attr-defined]
        return v


class ModuleDict(_Keyed):
    """An ordered dict of modules, registered under their keys.

    >>> d = ember.nn.ModuleDict({"enc": ember.nn.Linear(2, 2)}); list(d.keys())
    ['enc']
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]  # type: ignore[return-value]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    @property
    def _entries(self) -> dict[str, Any]:
        return self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()  # type: ignore[return-value]

    def values(self) -> Iterable[Module]:
        return self._modules.values()  # type: ignore[return-value]

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) modules from a mapping or an iterable of (key, module) pairs."""
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for j, pair in enumerate(pairs):
            if not isinstance(pair, tuple) and not isinstance(modules, Mapping):
                pair = tuple(pair)
            if len(pair) != 2:
                raise ValueError(
                    f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is required"
                )
            self[pair[0]] = pair[1]


def _param_summary(pairs: Iterable[tuple[Any, Any]]) -> str:
    """``extra_repr`` of the parameter containers: one ``(key): summary`` line an entry."""
    lines = []
    for k, p in pairs:
        if isinstance(p, Tensor):
            size = "x".join(str(s) for s in p.shape)
            kind = "Parameter containing" if isinstance(p, Parameter) else "Tensor"
            text = f"{kind}: [ember.{p.dtype.name} of size {size}]"
        else:
            text = type(p).__name__
        lines.append(f"  ({k}): {text}")
    return "\n".join(lines)


class ParameterList(Module):
    """A list of parameters (tensors are wrapped as ``Parameter``), registered as ``"0"``, ...

    >>> len(ember.nn.ParameterList([ember.nn.Parameter(ember.ones(2))]))
    1
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(self._size)[idx]])
        return getattr(self, str(_index(idx, self._size, "ParameterList")))

    def __setitem__(self, idx: int, param: Any) -> None:
        idx = _index(idx, self._size, "ParameterList")
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self._size))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a tensor becomes a ``Parameter``); returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append each of ``values``; returns self."""
        if isinstance(values, Tensor) or not isinstance(values, Iterable):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return _param_summary(enumerate(self))


class ParameterDict(_Keyed):
    """An ordered dict of parameters (tensors are wrapped as ``Parameter``).

    >>> list(ember.nn.ParameterDict({"w": ember.ones(2)}).keys())
    ['w']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    @property
    def _entries(self) -> dict[str, Any]:
        return self._keys

    def items(self) -> Iterable[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add (or replace) entries from a mapping or an iterable of (key, value) pairs."""
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return _param_summary(self.items())
