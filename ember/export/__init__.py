"""``ember.export``: a module traced ahead of time into an ``ExportedProgram``, as
``torch.export`` (NOTE [export] in ``exported_program.py``), saved and loaded with
``save``/``load`` (NOTE [export files] in ``_serialize.py``; not PyTorch's ``.pt2``
layout). ``dynamic_shapes`` is still to come."""

from ember.export._export import export
from ember.export._serialize import load, save
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
    "load",
    "save",
]
