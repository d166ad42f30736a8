"""Backends: ``cpu`` (NumPy kernels) and ``meta`` (shape and dtype rules)."""
