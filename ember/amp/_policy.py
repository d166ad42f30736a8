"""Which ops autocast casts on "cpu", and to what: PyTorch 2.13's CPU lists.

# NOTE [autocast policy]
PyTorch registers an AutocastCPU kernel for 127 op overloads (its dispatcher answers
``torch._C._dispatch_has_kernel_for_dispatch_key(name, "AutocastCPU")``); which of three
policies each follows was read from output dtypes under ``torch.autocast("cpu")``:

- ``LOWER``: floating CPU arguments (not float64) run in the region's lower-precision dtype:
  matrix products, convolutions, ``linear``, ``prelu``, attention;
- ``FP32``: floating CPU arguments in a lower precision run in float32: losses, 3-d and
  fractional pooling, some paddings, ``prod``, ``cdist``, ``trace``, FFTs, linear algebra;
- ``PROMOTE``: ``cat``, ``stack``, ``index_copy`` run in the widest floating dtype of their
  arguments (float32 over the lower precision; float64 is left as it is and ignored).

Every other op passes through unchanged, so ``relu``, ``softmax``, ``layer_norm``,
``sum``, ``cumsum`` keep their input's dtype (a bfloat16 activation stays bfloat16), as in
PyTorch on CPU (CUDA's lists differ; ember has none). Only the overloads named are cast:
``mm.out`` and in-place ops are not, as in PyTorch. Names ember does not define are
skipped (``missing()`` lists them).
"""

from __future__ import annotations

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"

_LOWER = """
    _addmm_activation _convolution.deprecated _native_multi_head_attention addbmm addmm
    baddbmm bmm conv1d conv1d.padding conv2d conv2d.padding conv3d conv3d.padding conv_tbc
    conv_transpose1d conv_transpose2d.input conv_transpose3d.input linalg_vecdot linear
    matmul mkldnn_rnn_layer mm prelu scaled_dot_product_attention
"""
_FP32 = """
    _grid_sampler_2d_cpu_fallback _lu_with_info adaptive_avg_pool3d adaptive_max_pool3d
    avg_pool3d binary_cross_entropy binary_cross_entropy_with_logits cdist cholesky
    cholesky_inverse cholesky_solve cosine_embedding_loss cross_entropy_loss ctc_loss.IntList
    ctc_loss.Tensor fake_quantize_per_tensor_affine fft_fft fft_fft2 fft_fftn fft_hfft
    fft_ifft fft_ifft2 fft_ifftn fft_ihfft fft_irfft fft_irfft2 fft_irfftn fft_rfft fft_rfft2
    fft_rfftn fractional_max_pool2d fractional_max_pool3d geqrf grid_sampler grid_sampler_2d
    grid_sampler_3d hinge_embedding_loss huber_loss inverse kl_div l1_loss linalg_cholesky
    linalg_cholesky_ex linalg_cond linalg_cond.p_str linalg_eig linalg_eigh linalg_eigvals
    linalg_eigvalsh linalg_householder_product linalg_inv linalg_inv_ex linalg_lstsq
    linalg_matrix_rank linalg_matrix_rank.atol_rtol_float linalg_matrix_rank.atol_rtol_tensor
    linalg_matrix_rank.tol_tensor linalg_qr linalg_solve linalg_svd linalg_svdvals
    linalg_tensorinv linalg_tensorsolve lu_solve margin_ranking_loss max_pool3d max_unpool2d
    max_unpool3d mse_loss multi_margin_loss multilabel_margin_loss
    multilabel_margin_loss_forward nanquantile nanquantile.scalar nll_loss nll_loss2d orgqr
    ormqr pinverse poisson_nll_loss polar prod prod.dim_int qr quantile quantile.scalar
    reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d replication_pad3d
    smooth_l1_loss soft_margin_loss stft stft.center svd trace triangular_solve
    triplet_margin_loss view_as_complex
"""
_PROMOTE = "cat stack index_copy"

#: aten overload name ("conv2d.padding"; a bare name is the default overload) -> policy
POLICY: dict[str, str] = {
    **dict.fromkeys(_LOWER.split(), LOWER),
    **dict.fromkeys(_FP32.split(), FP32),
    **dict.fromkeys(_PROMOTE.split(), PROMOTE),
}
