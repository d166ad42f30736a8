"""The compiler behind the lazy device: passes over a graph and code generation tiers.

Today: ``fusion`` groups chains of elementwise ops (with the full ``sum``/``mean`` that
consumes them) into one kernel each, and ``numba_tier`` generates a numba parallel loop per
group, cached in memory and on disk. Everything else runs on the cpu kernels, one op at a
time (the interpreter tier). The ``ember.fx`` graph IR, the named passes (dead code, common
subexpressions, constant folding) and the NumPy source tier are still to come.
"""
