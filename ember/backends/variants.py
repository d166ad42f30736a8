"""In-place and ``out=`` kernels derived from functional ones, for any backend (the
factories' ``out=`` forms too: NOTE [factory out=] in ``ember/ops/native/creation.py``).

For each functional op with variants (``VARIANTS_OF`` in ``ember/ops/native/_define.py``)
that has a kernel for a backend key but whose ``add_``/``add.out`` has none, register one
that runs the functional kernel and hands the result to the backend's ``write`` (which checks
shape and dtype as PyTorch does, copies, and bumps the version counter); an out= kernel first
runs the op's ``OUT_CHECKS`` entry, if it has one (``diff.out``), and for an op declared
``exact_out_dtype`` (the linear algebra ones) requires the result's dtype exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import dtypes
from ember._warn import warn_user
from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_PLAIN
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import (
    FUNCTIONAL_OF,
    OUT_CHECKS,
    VARIANTS_OF,
    exact_out_dtype,
)
from ember.ops.native.creation import FACTORY_OUTS, out_kernel_of
from ember.ops.registry import OpOverload

Writer = Callable[..., None]  # (dst, result, op name, may_resize, warn=True)


def check_write(dst: Any, result: Any, name: str, may_resize: bool, warn: bool = True) -> bool:
    """PyTorch's checks before writing ``result`` into ``dst``; True if ``dst`` must resize
    (with PyTorch's deprecation warning if it held elements, unless not ``warn``)."""
    if not dtypes.can_cast(result.dtype, dst.dtype):
        raise RuntimeError(
            f"{name}: result type {result.dtype._short} can't be cast to the desired output "
            f"type {dst.dtype._short}"
        )
    if tuple(result.shape) != tuple(dst.shape):
        if may_resize:
            if warn and dst.numel():
                warn_user(
                    f"An output with one or more elements was resized since it had shape "
                    f"{list(dst.shape)}, which does not match the required output shape "
                    f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                    "release outputs will not be resized unless they have zero elements. You can "
                    "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                    "with t.resize_(0)."
                )
            return True
        raise RuntimeError(
            f"{name}: output with shape {list(dst.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    return False


#: PyTorch's C++ names of the element types, as its out= dtype errors print them
_CPP = {
    "Bool": "bool", "Byte": "unsigned char", "Char": "signed char", "Short": "short int",
    "Int": "int", "Long": "long int", "Half": "c10::Half", "Float": "float", "Double": "double",
    "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>",
    "BFloat16": "c10::BFloat16",
}  # fmt: skip


def check_same_dtype(dst: Any, result: Any, name: str) -> None:
    """The out tensors of an op with several outputs (``max(dim, out=(v, i))``) must have the
    results' dtypes exactly, as in PyTorch (single outputs only need a safe cast)."""
    if dst.dtype != result.dtype:
        want, got = result.dtype._short, dst.dtype._short
        raise RuntimeError(
            f"{name}: Expected out tensor to have dtype {_CPP.get(want, want)}, but got "
            f"{_CPP.get(got, got)} instead"
        )


def _inplace(fn: Callable[..., Any], write: Writer, name: str) -> Callable[..., Any]:
    def kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
        write(self, fn(self, *args, **kwargs), name, False)
        return self

    return kernel


def _out(
    fn: Callable[..., Any],
    write: Writer,
    name: str,
    outs: tuple[str, ...],
    check: Callable[..., None] | None,
    exact: bool,
) -> Callable[..., Any]:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        dsts = [kwargs.pop(n) for n in outs]
        if check is not None:
            check(*args, **kwargs)
        result = fn(*args, **kwargs)
        if len(outs) == 1:
            if exact:
                check_same_dtype(dsts[0], result, name)
            write(dsts[0], result, name, True)
            return dsts[0]
        for d, r in zip(dsts, result, strict=True):
            check_same_dtype(d, r, name)
        for d, r in zip(dsts, result, strict=True):
            write(d, r, name, True)
        return tuple(dsts)

    return kernel


def derive(key: DispatchKey, write: Writer) -> int:
    """Register the missing in-place/out kernels for ``key``; returns how many."""
    count = 0
    for fop, (ip, o) in VARIANTS_OF.items():
        # a composite op's out= variant runs the decomposition, then writes
        own = (
            fop.registered(key)
            or fop.registered(DispatchKey.CompositeImplicitAutograd)
            or fop.registered(DispatchKey.CompositeExplicitAutograd)
        )
        if own is None or own[1] != KIND_PLAIN:
            continue
        fn = own[0]
        if ip is not None and ip.registered(key) is None:
            dispatcher.set_kernel(ip, key, _inplace(fn, write, ip.__name__), KIND_PLAIN)
            count += 1
        if o is not None and o.registered(key) is None:
            outs = tuple(a.name for a in o._schema.kwarg_only if a.is_write)
            kernel = _out(fn, write, o.__name__, outs, OUT_CHECKS.get(o), exact_out_dtype(o))
            dispatcher.set_kernel(o, key, kernel, KIND_PLAIN)
            count += 1
    for o, fop in FACTORY_OUTS.items():  # NOTE [factory out=]
        own = fop.registered(key)
        if own is not None and own[1] == KIND_PLAIN and o.registered(key) is None:
            dispatcher.set_kernel(o, key, out_kernel_of(o, own[0], write), KIND_PLAIN)
            count += 1
    return count


def functional_of(op: OpOverload) -> OpOverload | None:
    return FUNCTIONAL_OF.get(op)
