"""Side-by-side benchmarks of ember against NumPy and PyTorch: ``python -m benchmarks``."""
