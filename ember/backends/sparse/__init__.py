"""The SparseCPU key's kernels: the sparse COO layout (NOTE [sparse layout] in ``coo.py``).
Importing this package registers them; in-place and ``out=`` forms are derived last."""

from ember.backends.sparse import creation, pointwise, products, reductions, shapes, views
from ember.backends.sparse.variants import register_variants

__all__ = ["creation", "pointwise", "products", "reductions", "shapes", "views"]

register_variants()
