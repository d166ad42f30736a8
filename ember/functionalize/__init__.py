"""The Functionalize key: an in-place or ``out=`` op on a lazy tensor becomes its functional
op and a rebinding of what it wrote, so the Lazy key records pure ops only (NOTE
[functionalize] in ``fallback.py``). Importing this package registers the key's fallback.
"""

from ember.functionalize import fallback as fallback  # noqa: F401  (registers the fallback)
