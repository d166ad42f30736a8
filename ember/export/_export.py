"""``export(mod, args)``: a module traced ahead of time into an ``ExportedProgram`` (NOTE
[export] in ``exported_program.py``), as ``torch.export.export``."""

from __future__ import annotations

import inspect
from typing import Any

from ember._tensor import Tensor
from ember.export._tracing import trace
from ember.export.exported_program import ExportedProgram
from ember.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from ember.func._functional_call import call_swapped
from ember.nn.modules.module import Module
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["export"]


def _user_names(mod: Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """The placeholders of the tensor arguments: the ``forward`` parameter's name for a
    tensor passed as it is (``x``), with ``_<i>`` per leaf of a nested one (``xs_0``)."""
    try:
        params = list(inspect.signature(mod.forward).parameters)
    except (TypeError, ValueError):
        params = []
    names: list[str] = []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) and not params[i].startswith("*") else f"args_{i}"
        leaves = tree_flatten(a)[0]
        if isinstance(a, Tensor):
            names.append(base)
        else:
            names += [f"{base}_{j}" for j, x in enumerate(leaves) if isinstance(x, Tensor)]
    for key, v in kwargs.items():
        leaves = tree_flatten(v)[0]
        if isinstance(v, Tensor):
            names.append(key)
        else:
            names += [f"{key}_{j}" for j, x in enumerate(leaves) if isinstance(x, Tensor)]
    return names


def export(
    mod: Module,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    strict: bool = False,
    preserve_module_call_signature: tuple[str, ...] = (),
) -> ExportedProgram:
    """``mod(*args, **kwargs)`` traced into an ``ExportedProgram`` (NOTE [export]).

    >>> ep = ember.export.export(ember.nn.Linear(3, 2), (ember.ones(4, 3),))
    >>> [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    ['aten.linear.default']
    >>> ep.graph_signature.parameters
    ('weight', 'bias')
    >>> ep.module()(ember.ones(4, 3)).shape
    ember.Size([4, 2])
    """
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        raise ValueError(
            f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}"
        )
    if dynamic_shapes is not None:
        raise NotImplementedError(
            "ember.export.export: dynamic_shapes is not supported yet: ember traces static "
            "shapes (export once per input shape, or pass dynamic_shapes=None)"
        )
    kwargs = dict(kwargs or {})
    params = dict(mod.named_parameters())
    buffers = dict(mod.named_buffers())
    persistent = set(mod.state_dict(keep_vars=True))
    every_name = dict(mod.named_parameters(remove_duplicate=False))
    every_name.update(mod.named_buffers(remove_duplicate=False))
    lifted = [*params.values(), *buffers.values()]
    first = {id(t): name for name, t in [*params.items(), *buffers.items()]}

    flat, in_spec = tree_flatten((args, kwargs))
    positions = [i for i, a in enumerate(flat) if isinstance(a, Tensor)]
    n = len(lifted)

    def run(*inputs: Any) -> Any:
        by_tensor = {id(t): x for t, x in zip(lifted, inputs[:n], strict=True)}
        values = {name: by_tensor[id(t)] for name, t in every_name.items()}
        full = list(flat)
        for i, x in zip(positions, inputs[n:], strict=True):
            full[i] = x
        a, k = tree_unflatten(full, in_spec)
        return call_swapped(mod, values, mod, tuple(a), dict(k))

    lifted_names = [
        ("p_" if name in params else "b_") + name.replace(".", "_")
        for name in (first[id(t)] for t in lifted)
    ]
    user = _user_names(mod, args, kwargs)
    user_tensors = [flat[i] for i in positions]
    gm, out = trace(run, [*lifted, *user_tensors], lifted_names + user, pre_dispatch=True)
    _, out_spec = tree_flatten(out)
    input_specs = [
        InputSpec(
            InputKind.PARAMETER if name in params else InputKind.BUFFER,
            TensorArgument(ph),
            name,
            None if name in params else name in persistent,
        )
        for ph, name in zip(lifted_names, (first[id(t)] for t in lifted), strict=True)
    ]
    input_specs += [InputSpec(InputKind.USER_INPUT, TensorArgument(u), None) for u in user]
    output = next(node for node in gm.graph.nodes if node.op == "output")
    returned = tree_flatten(output.args[0])[0]
    output_specs = [
        OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(getattr(r, "name", str(r))), None)
        for r in returned
    ]
    _return_a_tuple(gm)
    state_dict = {k: v for k, v in [*params.items(), *buffers.items()] if k in persistent}
    constants = {k: v for k, v in buffers.items() if k not in persistent}
    return ExportedProgram(
        gm, ExportGraphSignature(input_specs, output_specs), state_dict,
        (args, kwargs), in_spec, out_spec, constants,
    )  # fmt: skip


def _return_a_tuple(gm: Any) -> None:
    """The graph returns its outputs flat, in a tuple (as PyTorch's exported graphs do)."""
    output = next(node for node in gm.graph.nodes if node.op == "output")
    flat = tree_flatten(output.args[0])[0]
    output.args = (tuple(flat),)
    gm.recompile()
