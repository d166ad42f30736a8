"""Meta rules: shapes and dtypes with no data. Importing this package registers them."""

from ember.backends.meta import (  # noqa: F401
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
    variants,  # noqa: F401  (last: derives in-place/out rules)
    views,
)
