"""CPU kernels: NumPy. Importing this package registers every CPU kernel."""

from ember.backends.cpu import pointwise  # noqa: F401
from ember.backends.cpu import variants  # noqa: F401  (last: derives in-place/out kernels)
