"""The compiler behind the lazy device: an ``ember.fx`` graph, named passes, code in tiers.

``pipeline.py`` is the table of contents: after ``ember/lazy/lowering.py`` (the lazy graph
as an fx graph over ndarrays), ``dce``, ``cse``, ``constant_folding``, ``fusion`` (numba tier),
``inplace`` and ``buffers``, each run by ``pass_manager.run_pass``; then code from
``interpreter_tier``, ``numpy_tier`` (with ``numpy_ops``, the ops written as direct NumPy)
or ``numba_tier``. ``effects`` says what a node writes and which storage it may share;
``array_ops`` are the storage operations a lowered graph calls; ``metrics`` and ``layout``
serve the lazy device too. The compiler does not import ``ember/lazy/``. See
``docs/lazy.md``.
"""
