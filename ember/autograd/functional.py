"""``ember.autograd.functional``: derivatives of a whole function at a point (``vjp``,
``jvp``, ``jacobian``, ``hessian``, ``vhp``, ``hvp``), as ``torch.autograd.functional``.

Each takes ``func`` and ``inputs`` (a Tensor or a tuple of Tensors) and returns results
shaped as PyTorch's: a Tensor where the inputs (or outputs) were a Tensor, a tuple where they
were a tuple, and for ``jacobian`` / ``hessian`` a tuple of tuples indexed [output][input].
Without ``create_graph`` results are detached; with it they carry a graph, so they can be
differentiated again. ``strict=True`` raises where an output does not depend on an input
instead of returning zeros.

# NOTE [forward mode by double backward]
ember has reverse mode only. A Jacobian-vector product ``J v`` comes from two backward
passes: ``g(u) = J^T u`` is linear in ``u``, so differentiating ``<g(u), v>`` with respect to
``u`` gives ``J v`` (for any ``u``; a zero ``u`` that requires grad is used). ``jvp`` and
``hvp`` use it, as PyTorch's do.

# NOTE [vectorize]
``vectorize=True`` batches the backward passes with ``ember.vmap``, as PyTorch's does: one
backward pass per output, its cotangents the rows of an identity, mapped over. Without it,
one backward pass runs per output element. ``strategy="forward-mode"`` (which, as in
PyTorch, needs ``vectorize=True``) pushes the columns of an identity through ``func`` as
tangents (forward-mode AD, ``ember.autograd.forward_ad``), mapped over with ``vmap``: one
forward pass for all of them, no backward pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
from ember._tensor import Tensor
from ember.autograd import forward_ad as fwAD

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

Tensors = tuple[Tensor, ...]


# --------------------------------------------------------------------------- helpers


def _as_tuple(x: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Any, ...]]:
    """(whether ``x`` was a tuple, ``x`` as a tuple), checking every element is a Tensor."""
    was_tuple = isinstance(x, tuple)
    items = x if was_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if was_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(el)}."
            )
    return was_tuple, items


def _unpack(res: Any, was_tuple: bool | tuple[bool, bool]) -> Any:
    """Undo ``_as_tuple`` on a result: one level, or two for [output][input] nestings."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            res = tuple(row[0] for row in res)
        return res if outer else res[0]
    return res if was_tuple else res[0]


def _prepare(xs: Tensors, create_graph: bool, need_graph: bool) -> Tensors:
    """Inputs for ``func``: fresh leaves (requiring grad if ``need_graph``), or, to build on an
    existing graph with ``create_graph``, a view that stays connected to it."""
    return tuple(
        x.view(x.shape)
        if create_graph and x.requires_grad
        else x.detach().requires_grad_(need_graph)
        for x in xs
    )


def _finish(res: Any, create_graph: bool) -> Any:
    """Detach results (nested tuples too) unless a graph was asked for."""
    if create_graph:
        return res
    if isinstance(res[0], Tensor):
        return tuple(r.detach() for r in res)
    return tuple(_finish(r, create_graph) for r in res)


def _check_v(v: Tensors, other: Tensors, other_is_tuple: bool) -> None:
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other, strict=True)):
        if a.shape != b.shape:
            where = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.shape} but got {a.shape}.")


_STRICT_REQUIRES_GRAD = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
    "outputs must be computed in a differentiable manner from the input when running in "
    "strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
    "user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
    "function with respect to input {i} is independent of the input. This is not allowed in "
    "strict mode. You should ensure that your function is twice differentiable and that the "
    "jacobian depends on the inputs (this would be violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
    "independent of the input. This is not allowed in strict mode. You should ensure that "
    "your function is thrice differentiable and that the hessian depends on the inputs.",
}


def _check_requires_grad(xs: tuple[Any, ...], kind: str, strict: bool) -> None:
    """In strict mode, every one of ``xs`` must exist and require grad."""
    if not strict:
        return
    for i, x in enumerate(xs):
        if x is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if not x.requires_grad:
            raise RuntimeError(_STRICT_REQUIRES_GRAD[kind].format(i=i))


def _grad(
    outputs: tuple[Any, ...],
    inputs: Tensors,
    grad_outputs: tuple[Any, ...] | None = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> tuple[Tensor | None, ...]:
    """``autograd.grad`` over the outputs that require grad (None for unused inputs, and for
    every input when no output requires grad)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [
        (o, g)
        for o, g in zip(outputs, grad_outputs, strict=True)
        if o is not None and o.requires_grad
    ]
    if not pairs:
        return (None,) * len(inputs)
    outs, gos = zip(*pairs, strict=True)
    return ember.autograd.grad(
        outs, inputs, gos, allow_unused=True, create_graph=create_graph, retain_graph=retain_graph
    )


_STRICT_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. "
    "This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _zeros_for_missing(
    grads: tuple[Tensor | None, ...], refs: Tensors, strict: bool, create_graph: bool, stage: str
) -> Tensors:
    """Zeros (shaped as ``refs``) for the gradients that are None; in strict mode, an error."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_MISSING[stage].format(i=i))
            g = ember.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        out.append(g)
    return tuple(out)


def _call(
    func: Callable[..., Any], inputs: Tensors, fn_name: str, strict: bool
) -> tuple[bool, Tensors]:
    was_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return was_tuple, outputs


def _vector(
    v: Any, refs: Tensors, refs_tuple: bool, fn_name: str, create_graph: bool, none_msg: str
) -> Tensors | None:
    """``v`` as a checked tuple, or None where PyTorch allows it (a single one-element ref)."""
    if v is None:
        if len(refs) != 1 or refs[0].nelement() != 1:
            raise RuntimeError(none_msg)
        return None
    _, vs = _as_tuple(v, "v", fn_name)
    vs = _prepare(vs, create_graph, need_graph=False)
    _check_v(vs, refs, refs_tuple)
    return vs


def _single_output(outputs: Tensors, was_tuple: bool, fn_name: str) -> None:
    if was_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )


_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)


def _prepared_inputs(inputs: Any, fn_name: str, create_graph: bool) -> tuple[bool, Tensors]:
    """``inputs`` checked (``_as_tuple``) and made into ``func``'s inputs, which need a graph
    (``_prepare``): the first step of every function of this module."""
    was_tuple, xs = _as_tuple(inputs, "inputs", fn_name)
    return was_tuple, _prepare(xs, create_graph, need_graph=True)


def _inputs_and_vector(
    inputs: Any, v: Any, fn_name: str, create_graph: bool
) -> tuple[bool, Tensors, Tensors | None]:
    """``_prepared_inputs`` and the vector ``v`` checked against them (``_vector``): the
    start of the products whose ``v`` is shaped like the inputs (``jvp``, ``vhp``, ``hvp``)."""
    inputs_tuple, xs = _prepared_inputs(inputs, fn_name, create_graph)
    return inputs_tuple, xs, _vector(v, xs, inputs_tuple, fn_name, create_graph, _NONE_INPUT)


def _scalar_gradient(
    func: Callable[..., Any], inputs: Tensors, fn_name: str, strict: bool
) -> tuple[bool, Tensors, tuple[Tensor | None, ...]]:
    """``func(inputs)``, which must be one single-element Tensor, and its gradient with a
    graph (the Jacobian that ``vhp`` and ``hvp`` differentiate again)."""
    outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    _single_output(outputs, outputs_tuple, fn_name)
    jac = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return outputs_tuple, outputs, jac


def _last_backward(
    of: tuple[Any, ...],
    wrt: Tensors,
    vs: Tensors | None,
    refs: Tensors,
    stage: str,
    create_graph: bool,
    strict: bool,
) -> Tensors:
    """A product's last backward pass: the gradient of ``of`` with respect to ``wrt`` against
    ``vs``, zeros shaped as ``refs`` where it is missing (``_zeros_for_missing`` at ``stage``),
    recorded when a graph is asked for or grad mode is on."""
    with ember.set_grad_enabled(create_graph or ember.is_grad_enabled()):
        grads = _grad(of, wrt, vs, create_graph=create_graph)
        return _zeros_for_missing(grads, refs, strict, create_graph, stage)


def _returned(
    outputs: Tensors, outputs_tuple: bool, result: Tensors, result_tuple: bool, create_graph: bool
) -> tuple[Any, Any]:
    """``(func(inputs), product)`` as a product returns them: detached unless
    ``create_graph`` (``_finish``), each a Tensor or a tuple as it was given (``_unpack``)."""
    return (
        _unpack(_finish(outputs, create_graph), outputs_tuple),
        _unpack(_finish(result, create_graph), result_tuple),
    )


# --------------------------------------------------------------------------- products


def vjp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    >>> ember.autograd.functional.vjp(lambda x: x * x, ember.tensor([1.0, 2.0]), ember.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with ember.enable_grad():
        inputs_tuple, inputs = _prepared_inputs(inputs, "vjp", create_graph)
        outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        vs = _vector(
            v, outputs, outputs_tuple, "vjp", create_graph,
            "The vector v can only be None if the user-provided function returns a single "
            "Tensor with a single element.",
        )  # fmt: skip
    result = _last_backward(outputs, inputs, vs, inputs, "back", create_graph, strict)
    return _returned(outputs, outputs_tuple, result, inputs_tuple, create_graph)


def jvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs``, by the double
    backward trick (NOTE [forward mode by double backward]).

    >>> ember.autograd.functional.jvp(lambda x: x * x, ember.tensor([1.0, 2.0]), ember.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with ember.enable_grad():
        inputs_tuple, inputs, vs = _inputs_and_vector(inputs, v, "jvp", create_graph)
        outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        us = tuple(ember.zeros_like(o, requires_grad=True) for o in outputs)
        g_of_u = _grad(outputs, inputs, us, create_graph=True)  # J^T u, linear in u
        _check_requires_grad(g_of_u, "grad_inputs", strict)
    result = _last_backward(g_of_u, us, vs, outputs, "back_trick", create_graph, strict)
    return _returned(outputs, outputs_tuple, result, outputs_tuple, create_graph)


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: entry [i][j] has shape
    ``outputs[i].shape + inputs[j].shape`` (a Tensor where both were single Tensors).

    >>> ember.autograd.functional.jacobian(lambda x: x * x, ember.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":  # NOTE [vectorize]: PyTorch's limits
        if create_graph:
            raise NotImplementedError(
                "ember.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        if strict:
            raise RuntimeError(
                "ember.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )
        return _jacobian_forward(func, inputs)
    with ember.enable_grad():
        inputs_tuple, inputs = _prepared_inputs(inputs, "jacobian", create_graph)
        outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError(
                "ember.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or `vectorize=False`."
            )
        by_rows = _jacobian_rows_vectorized if vectorize else _jacobian_rows
        rows = tuple(by_rows(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
    rows = _finish(rows, create_graph)
    return _unpack(rows, (outputs_tuple, inputs_tuple))


def _jacobian_forward(func: Callable[..., Any], inputs: Any) -> Any:
    """The Jacobian by forward mode: the identity's columns as tangents of the inputs, one
    ``jvp`` per column, mapped over with ``vmap`` (NOTE [vectorize])."""
    # lazy load: ember.func loads on first use (NOTE [loaded on first use]); it imports
    # ember.autograd
    from ember.func import vmap

    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    sizes = [x.numel() for x in inputs]
    total, start = sum(sizes), 0
    basis = []
    for x, n in zip(inputs, sizes, strict=True):
        basis.append(ember.eye(total, dtype=x.dtype)[:, start : start + n])
        start += n
    found: list[Any] = []  # (outputs_tuple, primal outputs), as the vmapped call saw them

    def push(*tangents: Tensor) -> tuple[Tensor, ...]:
        with fwAD.dual_level():
            duals = tuple(
                fwAD.make_dual(x, t.view_as(x)) for x, t in zip(inputs, tangents, strict=True)
            )
            outputs_tuple, outputs = _as_tuple(func(*duals), "outputs of the user-provided "
                                               "function", "jacobian")  # fmt: skip
            pairs = [fwAD.unpack_dual(o) for o in outputs]
        found[:] = [outputs_tuple, [p.primal for p in pairs]]
        return tuple(ember.zeros_like(p.primal) if p.tangent is None else p.tangent for p in pairs)

    columns = vmap(push)(*basis)
    outputs_tuple, primals = found
    # PyTorch's forward mode nests lists, not tuples
    rows = [
        [
            jac.permute(*range(1, jac.dim()), 0).reshape(*out.shape, *x.shape)
            for jac, x in zip(col.split(sizes, 0), inputs, strict=True)
        ]
        for col, out in zip(columns, primals, strict=True)
    ]
    return _unpack(rows, (outputs_tuple, inputs_tuple))


def _jacobian_rows(
    i: int, out: Tensor, inputs: Tensors, create_graph: bool, strict: bool
) -> Tensors:
    """d out / d input for every input: one backward pass per element of ``out``."""
    per_input: list[list[Tensor]] = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.nelement()):
        grads = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, x) in enumerate(zip(grads, inputs, strict=True)):
            if g is None:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is independent of input "
                        f"{j}. This is not allowed in strict mode."
                    )
                g = ember.zeros_like(x)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(
                    f"The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode when create_graph=True."
                )
            per_input[j].append(g)
    return tuple(
        (ember.stack(gs, 0) if gs else ember.zeros(0, *x.shape, dtype=x.dtype)).reshape(
            *out.shape, *x.shape
        )
        for gs, x in zip(per_input, inputs, strict=True)
    )


def _jacobian_rows_vectorized(
    i: int, out: Tensor, inputs: Tensors, create_graph: bool, strict: bool
) -> Tensors:
    """d out / d input for every input: the backward passes of all of ``out``'s elements as
    one, mapped over the rows of an identity with ``vmap`` (NOTE [vectorize])."""
    # lazy load: ember.func loads on first use (NOTE [loaded on first use]); it imports
    # ember.autograd
    from ember.func import vmap

    n = out.nelement()
    if n == 0 or not out.requires_grad:
        return tuple(ember.zeros(*out.shape, *x.shape, dtype=x.dtype) for x in inputs)
    basis = ember.eye(n, dtype=out.dtype).view(n, *out.shape)

    def row(ct: Tensor) -> tuple[Tensor, ...]:
        grads = _grad((out,), inputs, (ct,), retain_graph=True, create_graph=create_graph)
        return tuple(
            ember.zeros_like(x) if g is None else g for g, x in zip(grads, inputs, strict=True)
        )

    return tuple(
        r.reshape(*out.shape, *x.shape) for r, x in zip(vmap(row)(basis), inputs, strict=True)
    )


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar ``func`` at ``inputs``: entry [i][j] has shape
    ``inputs[i].shape + inputs[j].shape`` (a Tensor for a single input).

    >>> ember.autograd.functional.hessian(lambda x: (x**3).sum(), ember.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*xs: Tensor) -> Tensor:
        out = func(*xs)
        was_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if was_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def gradient(*xs: Tensor) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            # the duals must require grad, else the inner jacobian's inputs would be detached
            # copies without their tangents (PyTorch does the same)
            xs = tuple(x.requires_grad_(True) for x in xs)
        jac = jacobian(scalar, xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(
        gradient,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpack(res, (inputs_tuple, inputs_tuple))


def vhp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)``: a vector-Hessian product of a scalar ``func``.

    >>> cube = lambda x: (x**3).sum()
    >>> ember.autograd.functional.vhp(cube, ember.tensor([1.0, 2.0]), ember.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with ember.enable_grad():
        inputs_tuple, inputs, vs = _inputs_and_vector(inputs, v, "vhp", create_graph)
        outputs_tuple, outputs, jac = _scalar_gradient(func, inputs, "vhp", strict)
    result = _last_backward(jac, inputs, vs, inputs, "double_back", create_graph, strict)
    return _returned(outputs, outputs_tuple, result, inputs_tuple, create_graph)


def hvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), H v)``: a Hessian-vector product of a scalar ``func``, by the double
    backward trick (NOTE [forward mode by double backward]).

    >>> cube = lambda x: (x**3).sum()
    >>> ember.autograd.functional.hvp(cube, ember.tensor([1.0, 2.0]), ember.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with ember.enable_grad():
        inputs_tuple, inputs, vs = _inputs_and_vector(inputs, v, "hvp", create_graph)
        outputs_tuple, outputs, jac = _scalar_gradient(func, inputs, "hvp", strict)
        us = tuple(ember.zeros_like(x, requires_grad=True) for x in inputs)
        h_of_u = _grad(jac, inputs, us, create_graph=True)  # H^T u, linear in u
        _check_requires_grad(jac, "hessian", strict)
    result = _last_backward(h_of_u, us, vs, inputs, "double_back_trick", create_graph, strict)
    return _returned(outputs, outputs_tuple, result, inputs_tuple, create_graph)
