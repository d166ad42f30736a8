"""Sample inputs, one file per op family; importing this package registers them all."""

from ember.testing._internal.samples import (  # noqa: F401
    backward,
    copies,
    creation,
    fft,
    foreach,
    indexing,
    linalg,
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
