"""``ember._dynamo``'s names that scripts written for ``torch._dynamo`` set or read."""

from __future__ import annotations

import pytest

import ember
import ember._dynamo
from ember._dynamo.utils import counters
from tests.conftest import requires_torch, torch


def test_config_limits_are_the_recompile_limit() -> None:
    before = ember.aot.config.cache_size_limit
    try:
        ember._dynamo.config.cache_size_limit = 3
        assert ember.aot.config.cache_size_limit == 3
        assert ember._dynamo.config.recompile_limit == 3
        f = ember.compile(lambda x: x * 2)
        with pytest.warns(UserWarning, match="recompile limit"):
            for n in range(1, 6):
                f(ember.ones(n))
        assert len(f.impl.cache) == 3
    finally:
        ember._dynamo.config.cache_size_limit = before


def test_unknown_config_names_raise_and_counters_are_compiles() -> None:
    with pytest.raises(AttributeError, match="no bytecode tracer"):
        ember._dynamo.config.verbose = True
    with pytest.raises(AttributeError, match="no bytecode tracer"):
        _ = ember._dynamo.config.verbose
    ember._dynamo.reset()
    f = ember.compile(lambda x: x.sum() if x.sum() > 0 else -x)
    f(ember.ones(2))
    assert counters is ember._compile.counters
    assert sum(counters["graph_break"].values()) == 1


@requires_torch
def test_the_names_exist_in_torch_too() -> None:
    for name in ("disable", "allow_in_graph", "is_compiling", "reset", "config", "utils"):
        assert hasattr(torch._dynamo, name) and hasattr(ember._dynamo, name)
    assert hasattr(torch._dynamo.config, "cache_size_limit")
    assert hasattr(torch._dynamo.utils, "counters")
