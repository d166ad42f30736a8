"""The op catalogue: every aten op ember has, declared once by its schema, by family."""

from ember.ops.native import (  # noqa: F401
    backward,
    copies,
    copies_composite,
    creation,
    fft,
    foreach,
    indexing,
    linalg,
    linalg_composite,
    nn,
    pointwise,
    products,
    random,
    reductions,
    sorting,
    spatial,
    special,
    views,
)
