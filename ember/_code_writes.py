"""The writes a function's bytecode makes to objects it did not make: globals, closure
variables and its parameters, and anything reached from them (NOTE [writes in bytecode]).

# NOTE [writes in bytecode]
``ember.compile`` must know, before a function's body runs under its trace, whether the
body changes Python state a graph cannot hold (NOTE [compile side effects]). ``writes``
reads the bytecode once per code object with a small abstract interpreter: each value on
the operand stack and in each local variable carries, where it can, the *root* it was
reached from, a global, a closure variable or a parameter, and how many attribute,
item or iteration steps away it is (``state``, ``state.log``, ``state.items[0]``, each
item of ``for v in state.lists``; a local assigned one carries it on). A write is an
attribute or item set or deleted on a rooted value (``state.n += 1``, ``p.cache[k] = v``,
``del p.a``), a call of a mutating method of one (``state.log.append``), assigning a
global or closure variable, and ``print``. Values computed by anything else (calls,
arithmetic) carry no root: what a function returns is not followed. A parameter a nested
function captures lives in a cell and is still the parameter. A comprehension (before
Python 3.12 each kind, after it generator expressions) runs in a function of its own,
given an iterator: its writes are read with that iterator rooted where the iterated value
is, and its closure variables where the enclosing code's are (``_inlined``).

The interpreter walks the instructions in order. A jump target after an unconditional
jump starts from the stack the jump left; other opcodes move the stack by
``dis.stack_effect``. It is an approximation that errs in both directions only for code
whose stack shape differs between the paths into a block, which expressions rarely have.
Writes rooted at a global or closure variable are outer state whatever the values are;
those rooted at a parameter depend on what the function was given, which
``ember._outer_state.CalledCode`` checks at each call.
"""

from __future__ import annotations

import dis
from collections.abc import Callable, Iterator
from functools import lru_cache
from types import CodeType
from typing import NamedTuple

__all__ = ["MUTATORS", "Write", "writes"]

#: methods that change the object they are called on (lists, dicts, sets, deques, files)
MUTATORS = frozenset(
    "append extend insert pop popitem remove clear update setdefault add discard "
    "appendleft popleft extendleft write writelines put sort reverse".split()
)

_NO_STACK = frozenset(
    "NOP RESUME CACHE KW_NAMES EXTENDED_ARG MAKE_CELL COPY_FREE_VARS NOT_TAKEN "
    "JUMP_FORWARD JUMP_BACKWARD JUMP_BACKWARD_NO_INTERRUPT JUMP JUMP_NO_INTERRUPT "
    "SETUP_FINALLY SETUP_CLEANUP SETUP_WITH POP_BLOCK".split()
)
_ENDS = frozenset(
    "RETURN_VALUE RETURN_CONST RAISE_VARARGS RERAISE JUMP_FORWARD JUMP_BACKWARD "
    "JUMP_BACKWARD_NO_INTERRUPT JUMP JUMP_NO_INTERRUPT".split()
)


class Root(NamedTuple):
    """Where a value was reached from: ``kind`` is "global", "cell" or "param"; ``steps``
    the attribute, item or iteration steps from it (0: the root's value itself)."""

    kind: str
    name: str
    steps: int
    #: how the value is reached, as source would say it (``state.items[...]``)
    path: str

    def further(self, step: str) -> Root:
        return Root(self.kind, self.name, self.steps + 1, self.path + step)


class Write(NamedTuple):
    """One change the code makes: to what root (``steps`` away from it) and how, as a
    reason ``ember.compile`` reports."""

    root: Root
    what: str


def _root(kind: str, name: str) -> Root:
    return Root(kind, name, 0, name)


#: the functions Python makes for a comprehension (before 3.12 each kind, from 3.12 the
#: generator expressions only: the others are inlined into the code that has them)
_COMPS = frozenset(("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"))


def _inlined(
    comp: CodeType, iterated: Root | None, named: Callable[[str], Root | None]
) -> Iterator[Write]:
    """The writes of a comprehension's code, as the code that runs it makes them: its
    iterator (``.0``) is ``iterated``, its closure variables the enclosing code's
    variables (``named``), so ``[s.log.append(x) for s in states]`` writes to the items
    of ``states``."""
    for w in writes(comp):
        r = w.root
        if r.kind == "param":  # .0, the iterator the comprehension is given
            outer = iterated
        elif r.kind == "cell":
            outer = named(r.name)
        else:
            yield w
            continue
        if outer is not None:
            new = Root(
                outer.kind, outer.name, outer.steps + r.steps, outer.path + r.path[len(r.name) :]
            )
            yield Write(new, w.what.replace(r.path, new.path, 1))


@lru_cache(maxsize=4096)
def writes(code: CodeType) -> tuple[Write, ...]:
    """Each write ``code`` makes to state it was not the one to make, in order (NOTE
    [writes in bytecode]).

    >>> from ember._code_writes import writes
    >>> def bump(state, log):
    ...     state.n += 1
    ...     log.append(state.n)
    >>> [(w.root.name, w.what) for w in writes(bump.__code__)]
    [('state', 'sets state.n'), ('log', 'calls log.append')]
    """
    nparams = code.co_argcount + code.co_kwonlyargcount
    nparams += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
    params = frozenset(code.co_varnames[:nparams])
    free = frozenset(code.co_freevars)
    found: list[Write] = []
    stack: list[Root | None] = []
    local: dict[str, Root | None] = {}
    pending: dict[int, list[Root | None]] = {}
    ended = False
    #: comprehensions whose function is made, waiting for their iterable: (the stack
    #: depth at its GET_ITER, the comprehension's code); ``made``: one being made
    comps: list[tuple[int, CodeType]] = []
    made: CodeType | None = None
    last_code: CodeType | None = None

    def pop(n: int = 1) -> list[Root | None]:
        taken = [stack.pop() if stack else None for _ in range(n)]
        return taken  # top first

    def note(root: Root | None, what: str) -> None:
        if root is not None:
            found.append(Write(root, what))

    def named(name: str) -> Root | None:
        """What the local variable (or cell) ``name`` holds."""
        if name in local:
            return local[name]
        if name in free:
            return _root("cell", name)
        return _root("param", name) if name in params else None

    for ins in dis.get_instructions(code):
        op, arg, val = ins.opname, ins.arg, ins.argval
        if ins.is_jump_target:
            if ended:
                stack = list(pending.get(ins.offset, []))
            ended = False
        if op in ("CACHE",):
            continue
        if made is not None and op != "SET_FUNCTION_ATTRIBUTE":
            # the function a comprehension runs in is made: its iterable comes next
            comps.append((len(stack) + 1, made))
            made = None
        if op.startswith("LOAD_FAST") and op != "LOAD_FAST_AND_CLEAR":
            for name in val if isinstance(val, tuple) else (val,):
                stack.append(
                    local[name]
                    if name in local
                    else (_root("param", name) if name in params else None)
                )
        elif op in ("LOAD_GLOBAL", "LOAD_NAME"):
            if op == "LOAD_GLOBAL" and arg is not None and arg & 1:
                stack.append(None)  # the NULL ahead of a callable (3.11+)
            stack.append(_root("global", val))
            if val == "print":
                found.append(Write(_root("global", "print"), "calls print"))
        elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
            # a parameter a nested function captures lives in a cell: still the parameter
            stack.append(_root("cell", val) if val in free else named(val))
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            (obj,) = pop()
            method = op == "LOAD_METHOD" or (
                op == "LOAD_ATTR" and "NULL|self" in (ins.argrepr or "")
            )
            if val in MUTATORS and obj is not None:
                note(obj, f"calls {obj.path}.{val}")
            if method:
                stack.extend([None, obj])
            else:
                stack.append(obj.further(f".{val}") if obj is not None else None)
        elif op == "BINARY_SUBSCR" or (op == "BINARY_OP" and ins.argrepr == "[]"):
            _, container = pop(2)
            stack.append(container.further("[...]") if container is not None else None)
        elif op in ("GET_ITER", "GET_AITER"):
            if comps and comps[-1][0] == len(stack):
                found.extend(_inlined(comps.pop()[1], stack[-1], named))
            (it,) = pop()
            stack.append(it)
        elif op == "FOR_ITER":
            stack.append(stack[-1].further("[i]") if stack and stack[-1] is not None else None)
            pending[ins.argval] = stack[:-2]  # the loop's end: iterator (and item) gone
        elif op in ("STORE_ATTR", "DELETE_ATTR"):
            (obj,) = pop()
            if op == "STORE_ATTR":
                pop()
            if obj is not None:
                verb = "sets" if op == "STORE_ATTR" else "deletes"
                note(obj, f"{verb} {obj.path}.{val}")
        elif op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
            _, container = pop(2)
            if op == "STORE_SUBSCR":
                pop()
            note(container, f"writes an item of {container.path}" if container else "")
        elif op == "STORE_SLICE":
            _, _, container, _ = pop(4)
            note(container, f"writes a slice of {container.path}" if container else "")
        elif op.startswith("STORE_FAST") or op == "DELETE_FAST":
            names = val if isinstance(val, tuple) else (val,)
            if op == "STORE_FAST_LOAD_FAST":
                (value,) = pop()
                local[names[0]] = value
                stack.append(
                    local.get(names[1], _root("param", names[1]) if names[1] in params else None)
                )
            else:
                for name in names:
                    local[name] = None if op == "DELETE_FAST" else pop()[0]
        elif op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            if op == "STORE_GLOBAL":
                pop()
            found.append(Write(_root("global", val), f"assigns the global {val!r}"))
        elif op in ("STORE_DEREF", "DELETE_DEREF"):
            if op == "STORE_DEREF":
                (value,) = pop()
                if val not in free:
                    local[val] = value
            if val in free:
                found.append(Write(_root("cell", val), f"assigns the closure variable {val!r}"))
        elif op == "COPY":
            stack.append(stack[-arg] if arg is not None and len(stack) >= arg else None)
        elif op == "SWAP":
            if arg is not None and len(stack) >= arg:
                stack[-1], stack[-arg] = stack[-arg], stack[-1]
        elif op not in _NO_STACK:
            if op == "LOAD_CONST" and isinstance(val, CodeType) and val.co_name in _COMPS:
                last_code = val
            elif op == "MAKE_FUNCTION" and last_code is not None:
                made, last_code = last_code, None
            try:
                net = (
                    dis.stack_effect(ins.opcode, arg)
                    if ins.opcode >= dis.HAVE_ARGUMENT
                    else dis.stack_effect(ins.opcode)
                )
            except ValueError:
                net = 0
            if net < 0:
                pop(-net)
                if stack and not op.startswith(
                    ("POP", "RETURN", "END", "LIST_", "SET_", "MAP_", "DICT_")
                ):
                    stack[-1] = None
            elif net > 0:
                stack.extend([None] * net)
            elif stack:
                stack[-1] = None
        if ins.opcode in dis.hasjrel or ins.opcode in getattr(dis, "hasjabs", ()):
            if op != "FOR_ITER" and isinstance(ins.argval, int):
                pending.setdefault(ins.argval, list(stack))
        if op in _ENDS:
            ended = True
    return tuple(w for w in found if w.what)
