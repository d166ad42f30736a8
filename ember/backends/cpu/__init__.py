"""CPU kernels: NumPy. Importing this package registers every CPU kernel."""

from ember.backends.cpu import (  # noqa: F401
    backward,
    copies,
    creation,
    indexing,
    linalg,
    pointwise,
    reductions,
    views,
)
from ember.backends.cpu import variants  # noqa: F401  (last: derives in-place/out kernels)
