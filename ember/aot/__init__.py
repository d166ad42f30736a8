"""``ember.aot``: AOTAutograd (``aot_function``, ``aot_module``), its partitioners and
compiler helpers, as ``functorch.compile`` names them. See ``docs/aot.md``.

>>> from ember.aot import aot_function, nop
>>> aot_function(lambda x: x * 2, nop)(ember.ones(2))
tensor([2., 2.])
"""

from ember.aot.aot_autograd import (
    AOTCompiledFunction,
    AOTModule,
    aot_function,
    aot_module,
    aot_module_simplified,
    config,
    make_boxed_compiler,
    make_boxed_func,
    nop,
)
from ember.aot.partitioners import (
    default_partition,
    min_cut_rematerialization_partition,
    saved_bytes,
)

__all__ = [
    "AOTCompiledFunction", "AOTModule", "aot_function", "aot_module", "aot_module_simplified",
    "config", "default_partition", "make_boxed_compiler", "make_boxed_func",
    "min_cut_rematerialization_partition", "nop", "saved_bytes",
]  # fmt: skip
