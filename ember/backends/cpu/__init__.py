"""CPU kernels: NumPy. Importing this package registers every CPU kernel."""

from ember.backends.cpu import (  # noqa: F401
    activation,
    backward,
    complex,
    copies,
    creation,
    fft,
    histogram,
    indexing,
    lapack,
    linalg,
    loss,
    lu,
    nn,
    pointwise,
    products,
    random,
    reductions,
    rnn,
    scatter_reduce,
    sorting,
    spatial,
    special,
    variants,  # noqa: F401  (last: derives in-place/out kernels)
    views,
)
