"""``ember.backends``: the kernel backends ``cpu`` (NumPy kernels) and ``meta`` (shape and
dtype rules), and, at PyTorch's paths, the ``torch.backends`` switches for backends ember
does not have (``cudnn``, ``cuda``, ``mps``, ``opt_einsum``), which scripts read and set.

# NOTE [torch.backends switches]
The switches are no kernels: they live in ``ember/_backend_settings/``, apart from the kernel
backends, and are registered here as ``ember.backends.cudnn`` and so on, so both
``ember.backends.cudnn.benchmark = True`` and ``import ember.backends.cudnn`` work as in
PyTorch and reach the one module object.
"""

import sys

from ember._backend_settings import cuda, cudnn, mps, opt_einsum

for _module in (cuda, cudnn, mps, opt_einsum):
    sys.modules[f"{__name__}.{_module.__name__.rpartition('.')[2]}"] = _module
del _module
