"""Imports every family of batching rules, which registers them (NOTE [batching rules]);
the in-place rules last, as they serve the in-place ops whose functional op has a rule."""

from ember._batched import dims, kernel, matmul, more, nn, pointwise, random, views  # noqa: F401

more.register_inplace()
