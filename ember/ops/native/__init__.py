"""The op catalogue: every aten op ember has, declared once by its schema, by family."""

from ember.ops.native import (  # noqa: F401
    activation,
    backward,
    copies,
    creation,
    distance,
    foreach,
    indexing,
    linalg,
    loss,
    nn,
    pointwise,
    reductions,
    rnn,
    views,
    weight_norm,
)
