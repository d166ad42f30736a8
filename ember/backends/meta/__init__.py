"""Meta rules: shapes and dtypes with no data. Importing this package registers them."""

from ember.backends.meta import (  # noqa: F401
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
    variants,  # noqa: F401  (last: derives in-place/out rules)
    views,
)
