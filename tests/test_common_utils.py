"""``ember.testing._internal.common_utils`` and the pytree and weak-reference helpers that
subclass authors import, compared with PyTorch's (the ``lib`` fixture) where both exist."""

from __future__ import annotations

import gc
import unittest
from collections import OrderedDict, namedtuple
from typing import Any

import pytest

import ember
from tests.conftest import sub, torch

Point = namedtuple("Point", "x y")


# ------------------------------------------------------------------ pytree


def test_treespec_prints_as_pytorch(lib: Any) -> None:
    p = sub(lib, "utils._pytree")
    tree = [1, (2, None), {"a": 3, "b": [4]}, Point(5, 6), OrderedDict(k=7)]
    spec = p.tree_structure(tree)
    expected = (
        "TreeSpec(list, None, [*,\n"
        "  TreeSpec(tuple, None, [*,\n"
        "    *]),\n"
        "  TreeSpec(dict, ['a', 'b'], [*,\n"
        "    TreeSpec(list, None, [*])]),\n"
        f"  TreeSpec(namedtuple, {Point}, [*,\n"
        "    *]),\n"
        "  TreeSpec(OrderedDict, ['k'], [*])])"
    )
    assert repr(spec) == str(spec) == expected
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == (8, 14, 5)
    assert repr(p.tree_structure(1)) == "*"
    assert repr(p.tree_structure([])) == "TreeSpec(list, None, [])"


def test_tree_flatten_with_path(lib: Any) -> None:
    p = sub(lib, "utils._pytree")
    pairs, spec = p.tree_flatten_with_path([1, {"a": (2, 3)}, Point(4, 5)])
    assert [(p.keystr(path), leaf) for path, leaf in pairs] == [
        ("[0]", 1),
        ("[1]['a'][0]", 2),
        ("[1]['a'][1]", 3),
        ("[2].x", 4),
        ("[2].y", 5),
    ]
    assert repr(pairs[1][0]) == "(SequenceKey(idx=1), MappingKey(key='a'), SequenceKey(idx=0))"
    assert spec == p.tree_structure([1, {"a": (2, 3)}, Point(4, 5)])
    assert p.tree_leaves_with_path({"a": [1]})[0][1] == 1
    doubled = p.tree_map_with_path(lambda path, x: x * len(path), {"a": [1, 2]})
    assert doubled == {"a": [2, 4]}


def test_register_pytree_node_and_the_older_name(lib: Any) -> None:
    p = sub(lib, "utils._pytree")

    class Pair:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

    class Old:
        def __init__(self, v: Any) -> None:
            self.v = v

    p.register_pytree_node(
        Pair,
        lambda x: ([x.a, x.b], None),
        lambda v, _: Pair(*v),
        flatten_with_keys_fn=lambda x: ([(p.GetAttrKey("a"), x.a), (p.GetAttrKey("b"), x.b)], None),
    )
    p._register_pytree_node(Old, lambda x: ([x.v], None), lambda v, _: Old(v[0]))
    try:
        assert p.tree_leaves([Pair(1, Old(2)), 3]) == [1, 2, 3]
        out = p.tree_map(lambda x: x * 10, Pair(1, 2))
        assert (out.a, out.b) == (10, 20)
        assert [p.keystr(k) for k, _ in p.tree_flatten_with_path(Pair(1, 2))[0]] == [".a", ".b"]
        with pytest.raises(ValueError, match="flatten_with_keys_fn"):
            p.tree_flatten_with_path(Old(1))
    finally:
        del p.SUPPORTED_NODES[Pair], p.SUPPORTED_NODES[Old]


def test_tree_map_only_and_pytree_alias(lib: Any) -> None:
    p = sub(lib, "utils._pytree")
    assert p.tree_map_only((int,), lambda x: -x, [1, "s", 2.0, (3,)]) == [-1, "s", 2.0, (-3,)]
    assert p.PyTree is Any


# ------------------------------------------------------------------ weak references


def test_weak_id_ref_and_dictionary(lib: Any) -> None:
    weak = sub(lib, "utils.weak")
    x, y = lib.ones(2), lib.ones(2)
    assert weak.WeakIdRef(x) == weak.WeakIdRef(x) and not weak.WeakIdRef(x) == weak.WeakIdRef(y)
    assert hash(weak.WeakIdRef(x)) == id(x)
    d = weak.WeakIdKeyDictionary()
    d[x], d[y] = "x", "y"  # equal values, distinct keys
    assert len(d) == 2 and d[x] == "x" and x in d and d.get(lib.ones(1)) is None
    del x
    gc.collect()
    assert list(d.values()) == ["y"]


# ------------------------------------------------------------------ common_utils


def common_utils(lib: Any) -> Any:
    module = sub(lib, "testing._internal.common_utils")
    if lib is torch:
        # importing PyTorch's common_utils calls torch.backends.disable_global_flags(), which
        # makes every later cudnn flag assignment in this process raise (tests/test_namespaces
        # compares those flags): allow them again, as before the import
        torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
    return module


def test_parametrized_test_names_match_pytorch(lib: Any) -> None:
    cu = common_utils(lib)

    class T(cu.TestCase):
        @cu.parametrize("n", [1, 2])
        @cu.parametrize("dtype", [lib.float32, lib.int64])
        def test_f(self, n: int, dtype: Any) -> None:
            self.assertEqual(lib.ones(n, dtype=dtype).sum(), n)

        @cu.parametrize("a,b", [(1, 2), cu.subtest((3, 4), name="named")])
        def test_g(self, a: int, b: int) -> None:
            self.assertEqual(b - a, 1)

        @cu.parametrize("x", [0.5], name_fn=lambda x: f"half_{int(x * 2)}")
        def test_h(self, x: float) -> None:
            self.assertEqual(x, 0.5)

    cu.instantiate_parametrized_tests(T)
    names = sorted(n for n in dir(T) if n.startswith("test_"))
    assert names == [
        "test_f_n_1_float32",
        "test_f_n_1_int64",
        "test_f_n_2_float32",
        "test_f_n_2_int64",
        "test_g_a_1_b_2",
        "test_g_named",
        "test_h_half_1",
    ]
    result = unittest.TextTestRunner(stream=open("/dev/null", "w"), verbosity=0).run(  # noqa: SIM115
        unittest.defaultTestLoader.loadTestsFromTestCase(T)
    )
    assert result.testsRun == 7 and result.wasSuccessful()


def test_assert_equal_across_subclasses_and_numbers(lib: Any) -> None:
    cu = common_utils(lib)

    class Sub(lib.Tensor):
        pass

    class T(cu.TestCase):
        def runTest(self) -> None:  # noqa: N802
            pass

    tc = T()
    x = lib.tensor([1.0, 2.0])
    tc.assertEqual(x.as_subclass(Sub), x)
    tc.assertEqual(x, [1.0, 2.0])
    tc.assertEqual(x.sum(), 3)
    tc.assertEqual(x, x + 1e-7)
    tc.assertEqual({"a": (x, 1)}, {"a": (x.clone(), 1)})
    tc.assertEqual("s", "s")
    with pytest.raises(AssertionError):
        tc.assertEqual(x, x + 1)
    with pytest.raises(AssertionError):
        tc.assertEqual(x, x.double())  # exact_dtype
    tc.assertEqual(x, x.double(), exact_dtype=False)
    tc.assertNotEqual(x, x + 1)


def test_assert_equal_of_wrapper_subclasses_goes_through_their_handler(lib: Any) -> None:
    cu = common_utils(lib)
    LoggingTensor = sub(lib, "testing._internal.logging_tensor").LoggingTensor

    class T(cu.TestCase):
        def runTest(self) -> None:  # noqa: N802
            pass

    tc = T()
    a, b = LoggingTensor(lib.ones(3)), LoggingTensor(lib.ones(3))
    tc.assertEqual(a, b)
    with pytest.raises(AssertionError):
        tc.assertEqual(a, LoggingTensor(lib.zeros(3)))


def test_assert_expected_inline(lib: Any) -> None:
    cu = common_utils(lib)

    class T(cu.TestCase):
        def runTest(self) -> None:  # noqa: N802
            pass

    T().assertExpectedInline("a\nb", """a\nb""")
    with pytest.raises(AssertionError):
        T().assertExpectedInline("a", """b""")


def test_disable_gc_and_no_op_decorators(lib: Any) -> None:
    cu = common_utils(lib)
    assert gc.isenabled()
    with cu.disable_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    if lib is ember:  # PyTorch's run the test (or skip it) by its environment
        assert cu.TEST_WITH_TORCHDYNAMO is False

        def f() -> int:
            return 1

        assert cu.skipIfTorchDynamo(f) is f
        assert cu.skipIfTorchDynamo("needs dynamo")(f) is f
