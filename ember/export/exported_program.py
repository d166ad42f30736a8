"""``ExportedProgram``: a module traced ahead of time into one graph of aten ops with its
parameters and buffers as inputs, as ``torch.export.ExportedProgram``.

# NOTE [export]
``ember.export.export(mod, args)`` traces ``mod(*args)`` once, on fake tensors, at the
pre-dispatch level PyTorch's export uses (its "training IR": ops as they were called,
``aten.linear`` and ``aten.batch_norm`` whole, autograd not traced; NOTE [pre-dispatch
tracing]). The placeholders are the parameters (``p_<name>``), the buffers (``b_<name>``)
and the tensors among the arguments, named as PyTorch names them; the graph returns a tuple.
Writes stay in the graph as PyTorch's training IR keeps them (``add_`` on
``num_batches_tracked``), so ``ep.module()`` updates its buffers as the module would.
Shapes, dtypes and the non-tensor arguments are specialized to the example inputs.
``run_decompositions()`` traces the program again below autograd with a decomposition
table (``core_aten_decompositions()`` by default) and functionalized, as PyTorch's: the
graph is pure; the new value of each parameter, buffer or user input it writes is an
output, before the user outputs (``BUFFER_MUTATION``, ``PARAMETER_MUTATION``,
``USER_INPUT_MUTATION`` in the signature), and ``module()`` copies those values into the
tensors. Dead ops are removed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._decomp import core_aten_decompositions
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.export._tracing import trace_functional
from ember.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from ember.fx.graph_module import GraphModule
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["ExportedProgram"]


class ExportedProgram:
    """A traced module (NOTE [export]): ``graph_module``, ``graph_signature``,
    ``state_dict``; ``module()`` runs it as a module."""

    def __init__(
        self,
        graph_module: GraphModule,
        graph_signature: ExportGraphSignature,
        state_dict: dict[str, Tensor],
        example_inputs: tuple[tuple[Any, ...], dict[str, Any]],
        in_spec: Any,
        out_spec: Any,
        constants: dict[str, Any] | None = None,
    ) -> None:
        self.graph_module = graph_module
        self.graph_signature = graph_signature
        self.state_dict = state_dict
        self.constants = constants or {}
        self.example_inputs = example_inputs
        self.range_constraints: dict[Any, Any] = {}
        self._in_spec = in_spec
        self._out_spec = out_spec

    @property
    def graph(self) -> Any:
        return self.graph_module.graph

    def _lifted(self) -> list[Tensor]:
        """The parameters' and buffers' tensors, in placeholder order."""
        every = {**self.state_dict, **self.constants}
        return [every[s.target] for s in self.graph_signature.input_specs if s.target]

    def module(self) -> Module:
        """A module that runs the graph: the parameters and buffers registered under their
        ``state_dict`` names, called with the example inputs' structure."""
        return _ExportedModule(self)

    def run_decompositions(
        self, decomp_table: dict[Any, Callable[..., Any]] | None = None
    ) -> ExportedProgram:
        """The program traced again below autograd with ``decomp_table``
        (``core_aten_decompositions()`` by default; NOTE [export])."""
        table = core_aten_decompositions() if decomp_table is None else decomp_table
        names = [n.name for n in self.graph.nodes if n.op == "placeholder"]
        inputs = [*self._lifted(), *_user_tensors(self.example_inputs)]
        # an inference graph, as PyTorch's: below autograd nothing differentiates it, and a
        # cond or while_loop node then stays one node (NOTE [higher-order ops in graphs])
        with no_grad():
            gm, written = trace_functional(self.graph_module, inputs, names, table)
        returned = next(n for n in gm.graph.nodes if n.op == "output").args[0]
        specs = self.graph_signature.input_specs
        kinds = {
            InputKind.PARAMETER: OutputKind.PARAMETER_MUTATION,
            InputKind.BUFFER: OutputKind.BUFFER_MUTATION,
            InputKind.USER_INPUT: OutputKind.USER_INPUT_MUTATION,
        }
        outputs = [
            OutputSpec(
                kinds[specs[k].kind],
                TensorArgument(r.name),
                specs[k].target if specs[k].target is not None else specs[k].arg.name,
            )
            for k, r in zip(written, returned, strict=False)
        ]
        outputs += [
            OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(getattr(r, "name", str(r))), None)
            for r in returned[len(written) :]
        ]
        return ExportedProgram(
            gm, ExportGraphSignature(list(specs), outputs), self.state_dict,
            self.example_inputs, self._in_spec, self._out_spec, self.constants,
        )  # fmt: skip

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Unable to call ExportedProgram directly. You should use "
            "`exported_program.module()` instead."
        )

    def __str__(self) -> str:
        code = self.graph_module.print_readable(print_output=False)
        body = "\n".join("    " + line if line else line for line in code.splitlines())
        sig = "\n".join(
            "    " + line if line else line for line in str(self.graph_signature).splitlines()
        )
        return f"ExportedProgram:\n{body}\nGraph signature: \n{sig}\nRange constraints: {{}}\n"

    __repr__ = __str__


def _user_tensors(example: Any) -> list[Tensor]:
    return [a for a in tree_flatten(example)[0] if isinstance(a, Tensor)]


class _ExportedModule(Module):
    """What ``ExportedProgram.module()`` returns."""

    def __init__(self, ep: ExportedProgram) -> None:
        super().__init__()
        self.__dict__["_ep"] = ep
        params = set(ep.graph_signature.parameters)
        persistent = {s.target: s.persistent for s in ep.graph_signature.input_specs if s.target}
        for name in [s.target for s in ep.graph_signature.input_specs if s.target]:
            owner: Module = self
            *path, leaf = name.split(".")
            for part in path:
                child = owner._modules.get(part)
                if child is None:
                    child = Module()
                    owner.add_module(part, child)
                owner = child
            value = {**ep.state_dict, **ep.constants}[name]
            if name in params:
                p = value if isinstance(value, Parameter) else Parameter(value)
                owner.register_parameter(leaf, p)
            else:
                owner.register_buffer(leaf, value, persistent=persistent[name] is not False)
        self.__dict__["_names"] = [s.target for s in ep.graph_signature.input_specs if s.target]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        ep = self.__dict__["_ep"]
        flat, spec = tree_flatten((args, kwargs))
        if spec != ep._in_spec:
            raise ValueError(
                "ExportedProgram.module(): the inputs' structure differs from the exported "
                f"example's: got {spec}, expected {ep._in_spec}"
            )
        example = tree_flatten(ep.example_inputs)[0]
        tensors: list[Tensor] = []
        for k, (a, e) in enumerate(zip(flat, example, strict=True)):
            if isinstance(e, Tensor):
                tensors.append(a)
            elif a != e:
                raise ValueError(
                    f"ExportedProgram.module(): input {k} is {a!r}, but the program was "
                    f"exported with {e!r} (non-tensor inputs are specialized)"
                )
        state = dict(self.named_parameters(remove_duplicate=False))
        state.update(self.named_buffers(remove_duplicate=False))
        lifted = [state[n] for n in self.__dict__["_names"]]
        inputs = [*lifted, *tensors]
        out = ep.graph_module(*inputs)
        # the new values of written inputs come first (a decomposed program's: NOTE [export])
        position = {s.arg.name: k for k, s in enumerate(ep.graph_signature.input_specs)}
        by_target = {
            (s.target if s.target is not None else s.arg.name): position[s.arg.name]
            for s in ep.graph_signature.input_specs
        }
        n = 0
        with no_grad():
            for spec, value in zip(ep.graph_signature.output_specs, out, strict=True):
                if spec.kind is not OutputKind.USER_OUTPUT:
                    inputs[by_target[spec.target]].copy_(value)
                    n += 1
        return tree_unflatten(list(out[n:]), ep._out_spec)
