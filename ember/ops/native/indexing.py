"""The indexing ops: schemas (catalogue). ``Tensor.__getitem__``/``__setitem__`` translate
Python indices into these and the view ops (``ember/_indexing.py``)."""

from __future__ import annotations

from ember.ops.native._define import define

define("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", variants=(), out=True,
       out_overload="Tensor_out")  # fmt: skip
define(
    "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
    inplace=True,  # index_put_(Tensor(a!) self, ...) -> Tensor(a!)
    out=True,
)
