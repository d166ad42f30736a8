"""Mode-stack helpers that subclass and tracing code imports: ``_pop_mode_temporarily``,
``unset_fake_temporarily``, ``ember._C``'s dispatch-stack calls, and
``autograd.graph.increment_version``."""

from __future__ import annotations

from typing import Any

import pytest

import ember
from ember._subclasses.fake_tensor import FakeTensor, FakeTensorMode, unset_fake_temporarily
from ember.utils._python_dispatch import (
    TorchDispatchMode,
    _get_current_dispatch_mode_stack,
    _pop_mode_temporarily,
)


class Forward(TorchDispatchMode):
    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
        return func(*args, **(kwargs or {}))


def test_unset_fake_temporarily_takes_the_fake_mode_out_from_under_another_mode() -> None:
    with FakeTensorMode() as fake, Forward() as top:
        assert isinstance(ember.ones(1), FakeTensor)
        with unset_fake_temporarily() as m:
            assert m is fake
            assert type(ember.ones(1)) is ember.Tensor  # a real tensor, through `top`
            assert _get_current_dispatch_mode_stack() == [top]
        assert _get_current_dispatch_mode_stack() == [fake, top]
        assert isinstance(ember.ones(1), FakeTensor)
    with unset_fake_temporarily() as m:
        assert m is None


def test_pop_mode_temporarily_and_the_c_stack_calls() -> None:
    C = ember._C
    with Forward() as a, Forward() as b:
        assert C._len_torch_dispatch_stack() == 2 and C._get_dispatch_stack_at(0) is a
        with _pop_mode_temporarily() as m:
            assert m is b and C._len_torch_dispatch_stack() == 1
        assert C._len_torch_dispatch_stack() == 2
        mode = C._pop_torch_dispatch_stack()
        assert mode is b
        C._push_on_torch_dispatch_stack(mode)
    assert C._len_torch_dispatch_stack() == 0


def test_increment_version_makes_a_stale_backward_raise() -> None:
    x = ember.ones(3, requires_grad=True)
    y = x * 1
    z = (y * y).sum()  # saves y
    before = y._version
    ember.autograd.graph.increment_version(y)
    assert y._version == before + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()
    ember.autograd.graph.increment_version([x.detach(), y])
