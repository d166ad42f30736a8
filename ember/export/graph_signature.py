"""What an exported graph's inputs and outputs are, as ``torch.export.graph_signature``:
each placeholder a parameter, a buffer or a user input (``InputSpec``), each output a user
output or the new value of a written input (``OutputSpec``).

>>> from ember.export.graph_signature import InputKind, InputSpec, TensorArgument
>>> spec = InputSpec(InputKind.PARAMETER, TensorArgument("p_weight"), "weight")
>>> spec.kind, spec.arg.name, spec.target
(<InputKind.PARAMETER: 2>, 'p_weight', 'weight')
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "ExportGraphSignature",
    "InputKind",
    "InputSpec",
    "OutputKind",
    "OutputSpec",
    "TensorArgument",
]


class InputKind(enum.Enum):
    """What a placeholder of an exported graph holds (PyTorch's numbering)."""

    USER_INPUT = 1
    PARAMETER = 2
    BUFFER = 3
    CONSTANT_TENSOR = 4
    CUSTOM_OBJ = 5
    TOKEN = 6


class OutputKind(enum.Enum):
    """What an output of an exported graph is (PyTorch's numbering)."""

    USER_OUTPUT = 1
    LOSS_OUTPUT = 2
    BUFFER_MUTATION = 3
    PARAMETER_MUTATION = 4
    GRADIENT_TO_PARAMETER = 5
    GRADIENT_TO_USER_INPUT = 6
    USER_INPUT_MUTATION = 7
    TOKEN = 8


@dataclass(frozen=True)
class TensorArgument:
    """A tensor value of the graph, by its node's name."""

    name: str


@dataclass(frozen=True)
class InputSpec:
    """One placeholder: its kind, its node, and for a parameter or buffer its name in the
    module's ``state_dict`` (``target``)."""

    kind: InputKind
    arg: TensorArgument
    target: str | None
    persistent: bool | None = None


@dataclass(frozen=True)
class OutputSpec:
    """One output: its kind and its node; for a mutation, what it writes (``target``: the
    ``state_dict`` name of a parameter or buffer, a user input's placeholder name)."""

    kind: OutputKind
    arg: TensorArgument
    target: str | None


@dataclass
class ExportGraphSignature:
    """The placeholders' and outputs' roles, in graph order."""

    input_specs: list[InputSpec]
    output_specs: list[OutputSpec]

    def _names(self, kind: InputKind) -> tuple[str, ...]:
        return tuple(self._targets(kind).values())

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameters' ``state_dict`` names."""
        return self._names(InputKind.PARAMETER)

    @property
    def buffers(self) -> tuple[str, ...]:
        """The buffers' ``state_dict`` names."""
        return self._names(InputKind.BUFFER)

    @property
    def user_inputs(self) -> tuple[str, ...]:
        """The user inputs' placeholder names."""
        return tuple(s.arg.name for s in self.input_specs if s.kind is InputKind.USER_INPUT)

    @property
    def user_outputs(self) -> tuple[str, ...]:
        """The user outputs' node names."""
        return tuple(s.arg.name for s in self.output_specs if s.kind is OutputKind.USER_OUTPUT)

    def _mutated(self, kind: OutputKind) -> dict[str, str]:
        return {
            s.arg.name: s.target
            for s in self.output_specs
            if s.kind is kind and s.target is not None
        }

    @property
    def buffers_to_mutate(self) -> dict[str, str]:
        """Output node name -> the buffer it is the new value of."""
        return self._mutated(OutputKind.BUFFER_MUTATION)

    @property
    def parameters_to_mutate(self) -> dict[str, str]:
        """Output node name -> the parameter it is the new value of."""
        return self._mutated(OutputKind.PARAMETER_MUTATION)

    @property
    def user_inputs_to_mutate(self) -> dict[str, str]:
        """Output node name -> the user input (placeholder name) it is the new value of."""
        return self._mutated(OutputKind.USER_INPUT_MUTATION)

    def _targets(self, kind: InputKind) -> dict[str, str]:
        return {
            s.arg.name: s.target
            for s in self.input_specs
            if s.kind is kind and s.target is not None
        }

    @property
    def inputs_to_parameters(self) -> dict[str, str]:
        """Placeholder name -> parameter name."""
        return self._targets(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self) -> dict[str, str]:
        """Placeholder name -> buffer name."""
        return self._targets(InputKind.BUFFER)

    def __str__(self) -> str:
        lines = ["# inputs"]
        for s in self.input_specs:
            extra = f" target={s.target!r}" if s.target is not None else ""
            if s.persistent is not None:
                extra += f" persistent={s.persistent}"
            lines.append(f"{s.arg.name}: {s.kind.name}{extra}")
        lines += ["", "# outputs"]
        lines += [
            f"{s.arg.name}: {s.kind.name}" + (f" target={s.target!r}" if s.target else "")
            for s in self.output_specs
        ]
        return "\n".join(lines)
