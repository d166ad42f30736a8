"""The sparse COO layout's ops take or give sparse tensors, which the op harness (dense
samples, compared elementwise) cannot make or compare: they are compared with PyTorch in
``tests/test_sparse.py`` instead, and exempt here. Their Meta story: the constructor's Meta
kernel refuses with a clear error (no meta sparse tensors yet)."""

from __future__ import annotations

from ember.testing._internal.opinfo import EXEMPT

_WHY = "sparse layout: compared with PyTorch in tests/test_sparse.py"

for _name in (
    "_sparse_coo_tensor_with_dims_and_tensors.default", "sparse_coo_tensor.indices",
    "sparse_coo_tensor.indices_size", "_to_dense.default", "to_dense.default",
    "_to_sparse.default", "_to_sparse.sparse_dim", "to_sparse.default", "to_sparse.sparse_dim",
    "coalesce.default", "_coalesce.default", "is_coalesced.default", "indices.default",
    "values.default", "_indices.default", "_values.default", "sparse_dim.default",
    "dense_dim.default", "_nnz.default", "sparse_mask.default",
    "_sparse_mask_projection.default", "_sparse_mm.default", "_sparse_addmm.default",
    "_sparse_sum.default", "_sparse_sum.dim", "embedding_sparse_backward.default",
):  # fmt: skip
    EXEMPT[f"aten.{_name}"] = _WHY
