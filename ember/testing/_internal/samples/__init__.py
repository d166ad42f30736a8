"""Sample inputs, one file per op family; importing this package registers them all."""

from ember.testing._internal.samples import (  # noqa: F401
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
