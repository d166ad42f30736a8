"""Imports every family of batching rules, which registers them (NOTE [batching rules])."""

from ember._batched import dims, kernel, matmul, pointwise, views  # noqa: F401
