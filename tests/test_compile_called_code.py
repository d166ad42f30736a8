"""ember.compile of functions whose *called* functions have Python side effects or read
globals (NOTE [called code] in ember/_outer_state.py). A write to outer state in a helper
used to happen once, at trace time, and never again; a helper's global rebound later kept
its old value in the graph. Each result here is compared with the same calls run eagerly.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

import ember
from ember._compile import Unsupported
from ember._outer_state import CalledCode, code_writes

BACKENDS = ["ember", "aot_eager", "custom"]


def _compile(fn: Any, backend: str, **kw: Any) -> Any:
    if backend == "custom":
        return ember.compile(fn, backend=lambda gm, example_inputs: gm, **kw)
    return ember.compile(fn, backend=backend, **kw)


LOG: list[Any] = []
COUNT = 0
SCALE = 2.0


def _logs(x: Any) -> Any:
    LOG.append(x.shape)
    return x * 2


def _counts(x: Any) -> Any:
    global COUNT
    COUNT += 1
    return x + 1


def _deeper(x: Any) -> Any:
    return _logs(x).sum()  # the write is two calls down


def _scaled(x: Any) -> Any:
    return x * SCALE


def _effects(fn: Any, calls: int = 3) -> tuple[list[Any], tuple[int, int]]:
    """``calls`` results of ``fn`` and the effects they had on ``LOG`` and ``COUNT``."""
    LOG.clear()
    before = COUNT
    x = ember.arange(3.0)
    out = [fn(x) for _ in range(calls)]
    return out, (len(LOG), COUNT - before)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("helper", [_logs, _counts, _deeper])
def test_a_helper_writing_outer_state_does_so_at_every_call(backend: str, helper: Any) -> None:
    eager, eager_effects = _effects(lambda x: helper(x) * 3)
    compiled, compiled_effects = _effects(_compile(lambda x: helper(x) * 3, backend))
    assert compiled_effects == eager_effects != (0, 0)
    for e, c in zip(eager, compiled, strict=True):
        assert ember.equal(e, c)


def test_the_graph_break_names_the_helper_and_fullgraph_refuses_it() -> None:
    f = ember.compile(lambda x: _deeper(x) + 1)
    f(ember.ones(2))
    assert f.explain() == [
        "graph break: GraphBreak: the function _logs calls LOG.append (state outside it)"
    ]
    g = ember.compile(lambda x: _counts(x), fullgraph=True)
    with pytest.raises(Unsupported, match="_counts assigns the global 'COUNT'"):
        g(ember.ones(2))


def test_a_helper_printing_prints_at_every_call(capsys: Any) -> None:
    def shout(x: Any) -> Any:
        print("called")
        return x.neg()

    f = ember.compile(lambda x: shout(x) + 1)
    for _ in range(3):
        f(ember.ones(2))
    assert capsys.readouterr().out == "called\n" * 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_helper_made_by_a_factory_keeps_counting(backend: str) -> None:
    def make_counter() -> Any:
        n = 0

        def count(x: Any) -> Any:
            nonlocal n  # the cell is the factory's, made before the trace: outer state
            n += 1
            return x * n

        return count

    eager_counter, compiled_counter = make_counter(), make_counter()
    f = _compile(lambda x: compiled_counter(x), backend)
    x = ember.ones(2)
    for _ in range(3):
        assert ember.equal(f(x), eager_counter(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_nested_helpers_nonlocal_is_the_traces_own_state(backend: str) -> None:
    def outer(x: Any) -> Any:
        acc = []

        def step(y: Any) -> Any:
            nonlocal acc  # a cell made by this call of outer, inside the trace
            acc = [*acc, y]
            acc.append(y)
            return y * 2

        return step(step(x)) + len(acc)

    f = _compile(outer, backend)
    x = ember.arange(2.0)
    assert ember.equal(f(x), outer(x)) and ember.equal(f(x), outer(x))
    assert f.explain() == []  # one graph, no break


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_helpers_global_rebound_compiles_again(backend: str) -> None:
    global SCALE
    f = _compile(lambda x: _scaled(x) + 1, backend)
    x = ember.arange(3.0)
    try:
        assert ember.equal(f(x), x * 2 + 1)
        SCALE = 5.0
        assert ember.equal(f(x), x * 5 + 1)
    finally:
        SCALE = 2.0
    assert any("the global 'SCALE' now holds another object" in r for r in f.explain())


def test_a_user_modules_forward_calling_a_helper_runs_it_every_call() -> None:
    class Net(ember.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = ember.nn.Linear(3, 2)

        def forward(self, x: Any) -> Any:
            return _logs(self.lin(x))

    LOG.clear()
    net = ember.compile(Net())
    for _ in range(3):
        net(ember.ones(4, 3))
    assert LOG == [ember.Size([4, 2])] * 3


def test_ember_and_library_code_is_not_watched() -> None:
    """ember's own functions (with their caches and registries) never break a graph."""
    model = ember.nn.Sequential(ember.nn.Linear(4, 4), ember.nn.GELU(), ember.nn.LayerNorm(4))
    f = ember.compile(lambda x: ember.nn.functional.softmax(model(x), -1).sum())
    f(ember.randn(2, 4))
    assert f.explain() == []


def test_a_tracer_already_installed_still_sees_calls_and_is_restored() -> None:
    seen: list[str] = []

    def tracer(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name == "_scaled":
            seen.append("_scaled")

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        ember.compile(lambda x: _scaled(x) + 1)(ember.ones(2))
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(old)
    assert seen == ["_scaled"]  # the trace's own call, seen through the chained hook


def test_code_writes_reads_each_kind_of_write() -> None:
    box: dict[str, int] = {}

    def item(x: Any) -> Any:
        box["k"] = 1
        return x

    def pure(x: Any) -> Any:
        local = []
        local.append(x)
        return local[0] * SCALE

    assert code_writes(item.__code__) == "the function " + (
        "test_code_writes_reads_each_kind_of_write.<locals>.item writes an item of box "
        "(state outside it)"
    )
    assert code_writes(pure.__code__) is None
    with CalledCode() as called:
        pure(1)
    assert called.first_write() is None
    assert ("SCALE", globals(), "SCALE") in list(called.names())


class _State:
    def __init__(self) -> None:
        self.n = 0
        self.items: list[int] = []


STATE = _State()


def _bump(state: Any) -> None:
    state.n += 1  # a write to an object the helper is given


def _collect(items: Any, v: Any) -> None:
    items.append(v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_helper_writing_to_a_global_object_it_is_given_does_so_every_call(
    backend: str,
) -> None:
    def f(x: Any) -> Any:
        _bump(STATE)
        _collect(STATE.items, 1)
        return x * 2

    before = STATE.n
    g = _compile(f, backend)
    for _ in range(3):
        assert ember.equal(g(ember.ones(2)), ember.full((2,), 2.0))
    assert STATE.n - before == 3
    assert any("sets state.n, an object it was given" in r for r in g.explain())


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_to_the_compiled_functions_own_non_tensor_arguments_happen(backend: str) -> None:
    def f(d: Any, lst: Any, x: Any) -> Any:
        d["k"] = d.get("k", 0) + 1  # the user's dict, rebuilt by the trace
        _collect(lst, 1)  # the user's list, handed to a helper
        return x + 1

    g = _compile(f, backend)
    d: dict[str, int] = {}
    lst: list[int] = []
    for _ in range(3):
        g(d, lst, ember.ones(2))
    assert d == {"k": 3} and lst == [1, 1, 1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_to_objects_the_trace_made_stay_in_one_graph(backend: str) -> None:
    def f(x: Any) -> Any:
        acc: list[Any] = []
        _collect(acc, x * 2)
        _collect(acc, x + 1)
        return acc[0] + acc[1]

    g = _compile(f, backend)
    x = ember.arange(3.0)
    assert ember.equal(g(x), f(x)) and ember.equal(g(x), f(x))
    assert g.explain() == []  # no break


def test_code_writes_follows_attributes_items_and_augmented_assignments() -> None:
    def aug(x: Any) -> Any:
        STATE.n += 1
        return x

    def deep(x: Any) -> Any:
        STATE.items.append(x)
        return x

    def library_calls(x: Any) -> Any:
        return ember.add(x, 1).sort()  # ember.add is no write: ember is a module

    assert "sets STATE.n" in (code_writes(aug.__code__, namespace=globals()) or "")
    assert "calls STATE.items.append" in (code_writes(deep.__code__, namespace=globals()) or "")
    assert code_writes(library_calls.__code__, namespace=globals()) is None


def test_writes_to_objects_a_function_makes_are_not_outer_state() -> None:
    class Box:
        pass

    def made_here(x: Any) -> Any:
        box = Box()
        box.value = x * 2  # an attribute of a local object: no root, no write
        del box.value
        box.items = [x]
        box.items.append(x)
        return x + 1

    assert code_writes(made_here.__code__, namespace={}) is None
    f = ember.compile(lambda x: made_here(x) * 3)
    x = ember.arange(3.0)
    assert ember.equal(f(x), (x + 1) * 3) and f.explain() == []


class _Logged:
    def __init__(self) -> None:
        self.log: list[Any] = []


STATES = [_Logged(), _Logged()]


def test_writes_inside_comprehensions_reach_the_items_they_iterate() -> None:
    """A comprehension runs in a function of its own, given an iterator: its writes are
    those of the code that runs it (a list comprehension, a generator expression)."""

    def listcomp(x: Any) -> Any:
        [s.log.append(1) for s in STATES]
        return x

    def genexpr(x: Any, states: Any) -> Any:
        any(s.log.append(1) for s in states)
        return x

    def closure(x: Any, box: Any) -> Any:
        get = lambda: box  # noqa: E731  (``box`` lives in a cell)
        [box.log.append(v) for v in range(2)]
        return get

    assert "calls STATES[i].log.append" in (code_writes(listcomp.__code__) or "")
    from ember._code_writes import writes

    assert [(w.root.name, w.what) for w in writes(genexpr.__code__)] == [
        ("states", "calls states[i].log.append")
    ]
    assert [w.root.kind for w in writes(closure.__code__)] == ["param"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_comprehension_writing_to_what_it_iterates_does_so_every_call(backend: str) -> None:
    def through_global(x: Any) -> Any:
        [s.log.append(1) for s in STATES]
        return x * 2

    def through_argument(x: Any, states: Any) -> Any:
        [s.log.append(1) for s in states]
        return x * 2

    for s in STATES:
        s.log.clear()
    f, g = _compile(through_global, backend), _compile(through_argument, backend)
    mine = [_Logged()]
    x = ember.ones(2)
    for _ in range(3):
        assert ember.equal(f(x), x * 2) and ember.equal(g(x, mine), x * 2)
    assert [len(s.log) for s in STATES] == [3, 3] and len(mine[0].log) == 3


def _factory(scale: Any) -> tuple[Any, Any]:
    def helper(t: Any) -> Any:
        return t * scale

    def rebind(v: Any) -> None:
        nonlocal scale
        scale = v

    return helper, rebind


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_helpers_closure_variable_rebound_compiles_again(backend: str) -> None:
    helper, rebind = _factory(2.0)
    f = _compile(lambda x: helper(x) + 1, backend)
    x = ember.arange(3.0)
    assert ember.equal(f(x), x * 2 + 1)
    rebind(5.0)
    assert ember.equal(f(x), x * 5 + 1)
    assert any("the closure variable 'scale' now holds another object" in r for r in f.explain())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_helpers_closure_tensor_replaced_is_read_without_a_retrace(backend: str) -> None:
    helper, rebind = _factory(ember.ones(3))
    f = _compile(lambda x: helper(x), backend)
    x = ember.arange(3.0)
    assert ember.equal(f(x), x)
    rebind(ember.full((3,), 7.0))
    assert ember.equal(f(x), x * 7)
    assert f.explain() == []  # the new tensor is lifted in the old one's place


def test_two_helpers_from_one_factory_are_each_guarded() -> None:
    double, rebind_double = _factory(2.0)
    triple, rebind_triple = _factory(3.0)
    f = ember.compile(lambda x: double(x) + triple(x))
    x = ember.arange(3.0)
    assert ember.equal(f(x), x * 5)
    rebind_triple(10.0)
    assert ember.equal(f(x), x * 12)
    rebind_double(0.0)
    assert ember.equal(f(x), x * 10)


def test_a_closure_found_through_a_modules_attribute_is_guarded() -> None:
    class Net(ember.nn.Module):
        def __init__(self, scale: Any) -> None:
            super().__init__()
            self.helper, self.rebind = _factory(scale)

        def forward(self, x: Any) -> Any:
            return self.helper(x)

    net = Net(2.0)
    f = ember.compile(net)
    x = ember.arange(3.0)
    assert ember.equal(f(x), x * 2)
    net.rebind(4.0)
    assert ember.equal(f(x), x * 4)


def test_a_closure_its_caller_does_not_name_is_found_by_its_code() -> None:
    helper, rebind = _factory(2.0)
    table = [helper]  # the caller names ``table``, not the function
    f = ember.compile(lambda x: table[0](x))
    x = ember.arange(3.0)
    assert ember.equal(f(x), x * 2)
    rebind(6.0)
    assert ember.equal(f(x), x * 6)


def test_code_ember_or_the_standard_library_generates_is_not_watched() -> None:
    """ember's generated dispatch functions (no ``__name__`` in their namespace) and a
    namedtuple's ``__new__`` are library code: before, a compiled ``x + 1`` guarded 14
    names of ember's own generated code at every call."""
    import collections

    point = collections.namedtuple("point", "a b")
    with CalledCode() as called:
        ember.ones(2) + 1
        point(1, 2)
    assert called.seen == {} and list(called.names()) == []
    f = ember.compile(lambda x: x + 1)
    f(ember.ones(2, requires_grad=True))
    assert f._guards.names == []  # the lambda names no global and no closure variable


def test_a_caller_holding_an_object_whose_getattr_raises_still_finds_the_closure() -> None:
    class Odd:
        __slots__ = ()  # no __dict__: asking for one reaches __getattr__

        def __getattr__(self, name: str) -> Any:
            raise KeyError(name)  # not an AttributeError

    helper, rebind = _factory(2.0)
    odd = Odd()

    def f(x: Any) -> Any:
        return helper(x) if odd is not None else x

    g = ember.compile(f)
    x = ember.arange(3.0)
    assert ember.equal(g(x), x * 2)
    rebind(3.0)
    assert ember.equal(g(x), x * 3)


def test_the_reachability_search_passes_over_objects_whose_getattr_raises() -> None:
    class Odd:
        __slots__ = ("a",)

        def __getattr__(self, name: str) -> Any:
            raise KeyError(name)

    held = [Odd(), _Logged()]  # the search walks the list's items

    def f(x: Any) -> Any:
        _collect(held[1].log, 1)  # a helper writing to an object it is given
        return x * 2

    g = ember.compile(f)
    for _ in range(3):
        g(ember.ones(2))
    assert held[1].log == [1, 1, 1]
