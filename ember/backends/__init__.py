"""Backends: ``cpu`` (NumPy kernels) and ``meta`` (shape and dtype rules), and the switches
``torch.backends`` has for backends ember does not have (``cudnn``, ``cuda``, ``mps``,
``opt_einsum``), which scripts read and set.
"""

from ember.backends import cuda, cudnn, mps, opt_einsum
