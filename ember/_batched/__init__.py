"""The FuncTorchBatched key: vmap's BatchedTensor and its batching rules, one file per op
family (NOTE [vmap levels] in ``tensor.py``, NOTE [batching rules] in ``kernel.py``).
``rules`` registers them all; ``ember/__init__.py`` imports it once every op is defined."""
