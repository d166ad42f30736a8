"""``ember.nn.utils.prune``: zero parts of a module's tensors through a mask, as
``torch.nn.utils.prune``.

# NOTE [pruning]
Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, registers the mask as the
buffer ``<name>_mask`` and sets the plain attribute ``<name> = <name>_orig * <name>_mask``,
recomputed before every forward by a forward pre-hook: the pruning method object itself.
Pruning the same tensor again composes the methods in a ``PruningContainer``: the new method
sees only what the earlier masks left (the unpruned entries, or the unpruned channels of a
structured method). ``remove`` makes the pruning permanent: ``<name>`` becomes a parameter
again, holding the masked values.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

import ember
from ember._tensor import Tensor
from ember.nn.modules.module import Module
from ember.nn.utils.convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
    "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
    "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
    "random_structured", "random_unstructured", "remove",
]  # fmt: skip


class BasePruningMethod(ABC):
    """A way to compute a mask (``compute_mask``); ``apply`` prunes a module's tensor with
    it (NOTE [pruning])."""

    _tensor_name: str
    PRUNING_TYPE: str = "unstructured"

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for ``t``, given the mask so far (``default_mask``)."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_orig * <name>_mask`` of ``module``."""
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
        **kwargs: Any,
    ) -> BasePruningMethod:  # fmt: skip
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``, composed with any
        pruning already there; returns the method now acting on the tensor."""
        old = None
        for key, hook in list(module._forward_pre_hooks.items()):
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old = hook
                del module._forward_pre_hooks[key]
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            method = old
        elif old is not None:
            container = PruningContainer(old)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise ValueError(
                f"importance_scores should have the same shape as parameter {name} of {module}"
            )
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ember.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores.detach(), default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(
        self, t: Tensor, default_mask: Tensor | None = None,
        importance_scores: Tensor | None = None,
    ) -> Tensor:  # fmt: skip
        """``t`` times the mask this method computes for it (no module involved)."""
        scores = t if importance_scores is None else importance_scores
        mask = ember.ones_like(t) if default_mask is None else default_mask
        return t * self.compute_mask(scores, default_mask=mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter holding the masked
        values; ``<name>_orig`` and ``<name>_mask`` go."""
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Pruning methods applied one after the other to the same tensor."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1 and not isinstance(args[0], Iterable):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        elif len(args) == 1:
            for method in args[0]:  # type: ignore[attr-defined]
                self.add_pruning_method(method)
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Add ``method`` as the last one to apply."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and getattr(self, "_tensor_name", None) != method._tensor_name:
            if hasattr(self, "_tensor_name"):
                raise ValueError(
                    "Can only add pruning methods acting on the parameter named "
                    f"'{self._tensor_name}' to PruningContainer. Found '{method._tensor_name}'"
                )
            self._tensor_name = method._tensor_name
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed on what the earlier masks left."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            keep = default_mask == 1
            partial = method.compute_mask(t[keep], default_mask=default_mask[keep])
            new = mask.clone()
            new[keep] = partial.to(dtype=new.dtype)
            return new
        if method.PRUNING_TYPE == "structured":
            dim = method.dim  # type: ignore[attr-defined]
            n = t.dim()
            dim = dim + n if dim < 0 else dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor of size {t.dim()}")
            others = [d for d in range(n) if d != dim]
            keep_channel = default_mask.sum(others) != 0 if others else default_mask != 0
            idx = keep_channel.nonzero().reshape(-1)
            partial = method.compute_mask(
                t.index_select(dim, idx), default_mask=default_mask.index_select(dim, idx)
            )
            return mask.index_copy(dim, idx, partial.to(dtype=mask.dtype))
        if method.PRUNING_TYPE == "global":
            return method.compute_mask(t, default_mask=mask)
        raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")


class Identity(BasePruningMethod):
    """Prunes nothing (the mask stays all ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


def _validate_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real) or isinstance(amount, bool):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _nparams_toprune(amount: Any, size: int) -> int:
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={size}"
            )
        return int(amount)
    return round(amount * size)


def _check_dim(t: Tensor, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {tuple(t.shape)} with {t.dim()} dims"
        )
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _channel_mask(t: Tensor, dim: int, keep: Tensor) -> Tensor:
    """Ones in the channels ``keep`` (indices along ``dim``) of a tensor shaped like ``t``."""
    mask = ember.zeros_like(t)
    ones = ember.ones_like(t.index_select(dim, keep))
    return mask.index_copy(dim, keep, ones)


class _Unstructured(BasePruningMethod):
    """Prune ``amount`` (a count, or a fraction) entries: those ``_pruned`` picks."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_amount_init(amount)
        self.amount = amount

    def _pruned(self, t: Tensor, k: int) -> Tensor:
        """The flat indices of the ``k`` entries of ``t`` to prune."""
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _nparams_toprune(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            mask.view(-1)[self._pruned(t, k)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prune ``amount`` (a count, or a fraction) entries chosen at random."""

    def _pruned(self, t: Tensor, k: int) -> Tensor:
        prob = ember.rand_like(t.to(ember.float32) if not t.is_floating_point() else t)
        return ember.topk(prob.reshape(-1), k).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prune the ``amount`` entries of smallest absolute value (of the importance scores)."""

    def _pruned(self, t: Tensor, k: int) -> Tensor:
        return ember.topk(t.abs().reshape(-1), k, largest=False).indices

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Module, name: str, amount: int | float,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:  # fmt: skip
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _nparams_toprune(self.amount, size)
        if k == 0:
            return default_mask
        keep = ember.topk(ember.rand(size), size - k).indices.sort().values
        return _channel_mask(t, self.dim % t.dim(), keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(
        cls, module: Module, name: str, amount: int | float, dim: int = -1
    ) -> BasePruningMethod:  # type: ignore[override]  # noqa: E501
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` channels along ``dim`` of smallest ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_dim(t, self.dim)
        dim = self.dim % t.dim()
        size = t.shape[dim]
        k = _nparams_toprune(self.amount, size)
        if k == 0:
            return default_mask
        others = [d for d in range(t.dim()) if d != dim]
        norm = ember.linalg.vector_norm(t, ord=self.n, dim=others)
        keep = ember.topk(norm, size - k, largest=True).indices
        return _channel_mask(t, dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Module, name: str, amount: int | float, n: Any, dim: int,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:  # fmt: skip
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prune where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Prune nothing, but set up ``<name>_orig`` and ``<name>_mask`` (all ones).

    >>> m = ember.nn.utils.prune.identity(ember.nn.Linear(2, 3), "bias")
    >>> m.bias_mask
    tensor([1., 1., 1.])
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Prune ``amount`` random entries of ``module.<name>``.

    >>> m = ember.nn.utils.prune.random_unstructured(ember.nn.Linear(2, 3), "weight", 2)
    >>> int((m.weight == 0).sum())
    2
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None
) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` of smallest magnitude.

    >>> m = ember.nn.Linear(2, 2)
    >>> with ember.no_grad(): _ = m.weight.copy_(ember.tensor([[1.0, -4.0], [0.5, 3.0]]))
    >>> ember.nn.utils.prune.l1_unstructured(m, "weight", amount=0.5).weight
    tensor([[ 0., -4.],
            [ 0.,  3.]], grad_fn=<MulBackward0>)
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``.

    >>> m = ember.nn.utils.prune.random_structured(ember.nn.Linear(2, 4), "weight", 1, 0)
    >>> int((m.weight.abs().sum(1) == 0).sum())
    1
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Module, name: str, amount: int | float, n: Any, dim: int,
    importance_scores: Tensor | None = None,
) -> Module:  # fmt: skip
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest
    ``n``-norm.

    >>> m = ember.nn.utils.prune.ln_structured(ember.nn.Linear(3, 4), "weight", 2, 2, 0)
    >>> int((m.weight.abs().sum(1) == 0).sum())
    2
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable[tuple[Module, str]], pruning_method: type[BasePruningMethod],
    importance_scores: dict[tuple[Module, str], Tensor] | None = None, **kwargs: Any,
) -> None:  # fmt: skip
    """Prune the given ``(module, name)`` tensors together, as one vector (the smallest
    ``amount`` over all of them, for ``L1Unstructured``).

    >>> a, b = ember.nn.Linear(2, 2), ember.nn.Linear(2, 2)
    >>> ember.nn.utils.prune.global_unstructured(
    ...     [(a, "weight"), (b, "weight")], ember.nn.utils.prune.L1Unstructured, amount=4)
    >>> int((a.weight == 0).sum() + (b.weight == 0).sum())
    4
    """
    params = list(parameters)
    scores = importance_scores or {}
    vector = parameters_to_vector([scores.get((m, n), getattr(m, n)).detach() for m, n in params])
    default = parameters_to_vector(
        [getattr(m, n + "_mask", ember.ones_like(getattr(m, n))) for m, n in params]
    )
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"
        )
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    final = container.compute_mask(vector, default)
    start = 0
    for module, name in params:
        p = getattr(module, name)
        custom_from_mask(module, name, final[start : start + p.numel()].view_as(p))
        start += p.numel()


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is 0.

    >>> m = ember.nn.utils.prune.custom_from_mask(
    ...     ember.nn.Linear(2, 1), "bias", mask=ember.tensor([0.0]))
    >>> bool(m.bias == 0), m.bias.grad_fn.name()
    (True, 'MulBackward0')
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent (NOTE [pruning]).

    >>> m = ember.nn.utils.prune.identity(ember.nn.Linear(2, 3), "bias")
    >>> type(ember.nn.utils.prune.remove(m, "bias").bias).__name__
    'Parameter'
    """
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module: Module) -> bool:
    """Whether any submodule of ``module`` has a pruning hook.

    >>> ember.nn.utils.prune.is_pruned(ember.nn.Linear(1, 1))
    False
    """
    for sub in module.modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
