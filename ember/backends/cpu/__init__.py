"""CPU kernels: NumPy. Importing this package registers every CPU kernel."""

from ember.backends.cpu import (  # noqa: F401
    activation,
    backward,
    copies,
    creation,
    indexing,
    linalg,
    loss,
    nn,
    pointwise,
    reductions,
    rnn,
    variants,  # noqa: F401  (last: derives in-place/out kernels)
    views,
)
