"""Imports every family of batching rules, which registers them (NOTE [batching rules]);
the in-place rules last, as they serve the in-place ops whose functional op has a rule."""

from ember._batched import (  # noqa: F401
    build,
    dims,
    distance,
    foreach,
    indexed,
    kernel,
    linalg,
    matmul,
    more,
    nn,
    norms,
    pointwise,
    random,
    search,
    sequences,
    view_scatter,
    views,
)

more.register_inplace()
