"""``ember.export``: a module traced ahead of time into an ``ExportedProgram``, as
``torch.export`` (NOTE [export] in ``exported_program.py``). ``save``/``load`` and
``dynamic_shapes`` are still to come."""

from ember.export._export import export
from ember.export.exported_program import ExportedProgram
from ember.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = [
    "ExportGraphSignature",
    "ExportedProgram",
    "InputKind",
    "InputSpec",
    "OutputKind",
    "OutputSpec",
    "TensorArgument",
    "export",
]
