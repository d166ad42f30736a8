"""Pickling and deep copies of Tensor subclasses as PyTorch's (NOTE [subclass pickling] in
``ember/_tensor_pickle.py``): ``__reduce_ex__`` through ``_rebuild_from_type_v2`` keeps the
class, the attributes and the slots; wrappers rebuild without values; ``deepcopy`` keeps the
class, state, ``requires_grad`` and ``.grad``, and refuses a non-leaf. Each case runs on
both libraries."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

import ember

from .conftest import requires_torch, torch

LIBS = [ember, torch] if torch is not None else [ember]
ids = [m.__name__ for m in LIBS]


def _make(lib: Any) -> dict[str, type]:
    tree_map = (ember.utils._pytree if lib is ember else lib.utils._pytree).tree_map

    class Marked(lib.Tensor):
        pass

    class Slotted(lib.Tensor):
        __slots__ = ["extra"]

    class Wrapper(lib.Tensor):
        __slots__ = ["elem"]

        @staticmethod
        def __new__(cls: Any, elem: Any, requires_grad: bool = False) -> Any:
            r = lib.Tensor._make_wrapper_subclass(
                cls, elem.size(), dtype=elem.dtype, requires_grad=requires_grad
            )
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kw: Any = None) -> Any:
            def unwrap(e: Any) -> Any:
                return e.elem if isinstance(e, cls) else e

            out = func(*tree_map(unwrap, args), **tree_map(unwrap, kw or {}))
            return tree_map(lambda e: cls(e) if isinstance(e, lib.Tensor) else e, out)

    made = {"Marked": Marked, "Slotted": Slotted, "Wrapper": Wrapper}
    for name, cls in made.items():  # module-level names, so that pickle finds the classes
        cls.__qualname__ = cls.__name__ = f"{lib.__name__}_{name}"
        globals()[cls.__qualname__] = cls
    return made


_CLASSES = {lib.__name__: _make(lib) for lib in LIBS}


def _classes(lib: Any) -> dict[str, type]:
    return _CLASSES[lib.__name__]


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=ids)
def test_pickle_keeps_class_attributes_and_slots(lib: Any) -> None:
    c = _classes(lib)
    m = lib.tensor([1.0, 2.0]).as_subclass(c["Marked"])
    m.note = "kept"
    func, args = m.__reduce_ex__(2)
    assert func.__name__ == "_rebuild_from_type_v2" and args[1] is c["Marked"]
    assert args[3] == {"note": "kept"}  # the state: user attributes only
    back = pickle.loads(pickle.dumps(m))
    assert type(back) is c["Marked"] and back.note == "kept" and back.tolist() == [1.0, 2.0]
    s = lib.tensor([3.0]).as_subclass(c["Slotted"])  # a class with slots of its own
    s.extra = {"k": 1}
    back = pickle.loads(pickle.dumps(s))
    assert type(back) is c["Slotted"] and back.extra == {"k": 1} and back.tolist() == [3.0]
    plain = lib.ones(2)
    assert pickle.loads(pickle.dumps(plain)).tolist() == [1.0, 1.0]
    assert plain.__reduce_ex__(2)[0].__name__ != "_rebuild_from_type_v2"  # the fast path


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=ids)
def test_pickle_of_a_parameter_of_a_subclass_and_of_a_wrapper(lib: Any) -> None:
    c = _classes(lib)
    p = lib.nn.Parameter(lib.ones(2).as_subclass(c["Marked"]))
    p.note = "param"
    back = pickle.loads(pickle.dumps(p))
    assert type(back) is c["Marked"] and isinstance(back, lib.nn.Parameter)
    assert back.note == "param" and back.requires_grad and back.grad_fn is not None  # an alias
    w = c["Wrapper"](lib.tensor([1.0, 2.0]), requires_grad=True)
    w.note = "w"
    back = pickle.loads(pickle.dumps(w))
    assert type(back) is c["Wrapper"] and back.note == "w" and back.requires_grad
    assert back.elem.tolist() == [1.0, 2.0] and tuple(back.shape) == (2,)


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=ids)
def test_deepcopy_keeps_state_grad_and_memo_and_refuses_non_leaves(lib: Any) -> None:
    c = _classes(lib)
    w = c["Wrapper"](lib.tensor([1.0, 2.0]), requires_grad=True)
    w.note = ["w"]
    d = copy.deepcopy(w)
    assert type(d) is c["Wrapper"] and d.note == ["w"] and d.note is not w.note
    assert d.elem.tolist() == [1.0, 2.0] and d.elem is not w.elem and d.requires_grad
    leaf = lib.ones(2, requires_grad=True)
    leaf.note = 3
    leaf.grad = lib.full((2,), 0.5)
    d = copy.deepcopy(leaf)
    assert d.note == 3 and d.requires_grad and d.is_leaf and d.grad.tolist() == [0.5, 0.5]
    p = lib.nn.Parameter(lib.zeros(3))
    both = copy.deepcopy({"a": p, "b": p})
    assert both["a"] is both["b"] and type(both["a"]) is lib.nn.Parameter
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(leaf * 2)


def test_deepcopy_of_a_non_wrapper_subclass_keeps_class_and_state() -> None:
    """PyTorch 2.13 refuses this unless the class defines new_empty (docs/fidelity.md);
    ember copies it."""
    m = ember.tensor([1.0, 2.0]).as_subclass(_classes(ember)["Marked"])
    m.note = "kept"
    d = copy.deepcopy(m)
    assert type(d) is type(m) and d.note == "kept" and d.tolist() == [1.0, 2.0]
    d.add_(1)
    assert m.tolist() == [1.0, 2.0]  # a copy, not an alias
