"""The op catalogue: every aten op ember has, declared once by its schema, by family."""

from ember.ops.native import (  # noqa: F401
    backward,
    copies,
    creation,
    fft,
    foreach,
    indexing,
    linalg,
    linalg_composite,
    nn,
    pointwise,
    reductions,
    special,
    views,
)
