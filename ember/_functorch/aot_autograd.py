"""``torch._functorch.aot_autograd``'s names, from ``ember.aot``.

>>> from ember._functorch.aot_autograd import aot_function
>>> from ember._functorch.compile import nop
>>> aot_function(lambda x: x + 1, nop)(ember.zeros(1))
tensor([1.])
"""

from ember.aot.aot_autograd import (
    aot_function,
    aot_module,
    aot_module_simplified,
    make_boxed_compiler,
    make_boxed_func,
)

__all__ = [
    "aot_function", "aot_module", "aot_module_simplified", "make_boxed_compiler",
    "make_boxed_func",
]  # fmt: skip
