"""``functorch.compile``'s names (``aot_function``, ``aot_module``, ``make_boxed_func``, the
partitioners, ``nop``), from ``ember.aot``.

>>> from ember._functorch.compile import aot_function, make_boxed_func
>>> def compiler(gm, example_inputs):
...     return make_boxed_func(gm)
>>> aot_function(lambda x: x * 3, compiler)(ember.ones(1))
tensor([3.])
"""

from ember.aot.aot_autograd import (
    aot_function,
    aot_module,
    aot_module_simplified,
    make_boxed_compiler,
    make_boxed_func,
    nop,
)
from ember.aot.ember_backend import ember_compiler
from ember.aot.partitioners import default_partition, min_cut_rematerialization_partition

__all__ = [
    "aot_function", "aot_module", "aot_module_simplified", "default_partition",
    "ember_compiler", "make_boxed_compiler", "make_boxed_func",
    "min_cut_rematerialization_partition", "nop",
]  # fmt: skip
