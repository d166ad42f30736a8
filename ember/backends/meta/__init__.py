"""Meta rules: shapes and dtypes with no data. Importing this package registers them."""

from ember.backends.meta import pointwise  # noqa: F401
from ember.backends.meta import variants  # noqa: F401  (last: derives in-place/out rules)
