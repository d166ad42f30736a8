"""``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d`` and ``SyncBatchNorm``: batch statistics
while training (updating running ones in place), running statistics in eval mode."""

from __future__ import annotations

import sys
from typing import Any

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()
    _version = 2  # PyTorch's state_dict metadata version for the norm layers

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ember.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(ember.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer(
                "running_mean", ember.zeros(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "running_var", ember.ones(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "num_batches_tracked", ember.tensor(0, dtype=ember.long, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {want} input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight,
            self.bias,
            use_batch,
            momentum,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            "{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
            "track_running_stats={track_running_stats}"
        ).format(**self.__dict__, use_bias=self.bias is not None)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over ``(N, C)`` or ``(N, C, L)`` input.

    >>> ember.nn.BatchNorm1d(3)(ember.randn(4, 3)).shape
    ember.Size([4, 3])
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization over ``(N, C, H, W)`` input.

    >>> ember.nn.BatchNorm2d(3)(ember.randn(2, 3, 4, 4)).shape
    ember.Size([2, 3, 4, 4])
    """

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization over ``(N, C, D, H, W)`` input.

    >>> ember.nn.BatchNorm3d(3)(ember.randn(2, 3, 2, 4, 4)).shape
    ember.Size([2, 3, 2, 4, 4])
    """

    _dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose statistics PyTorch gathers across the processes of a group
    while training. In one process (no process group, or a world of one) it is
    ``BatchNorm`` over any ``(N, C, *)`` input, as PyTorch's on the CPU; across several
    processes ember does not synchronise the statistics yet and raises (PyTorch's CPU build
    raises there too: its kernel is GPU-only).

    >>> ember.nn.SyncBatchNorm(3)(ember.randn(4, 3, 2)).shape
    ember.Size([4, 3, 2])
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        dist = sys.modules.get("ember.distributed")  # never initialized if never imported
        if self.training and dist is not None and dist.is_initialized():
            if dist.get_world_size(self.process_group) > 1:
                raise NotImplementedError(
                    "SyncBatchNorm: synchronising batch statistics across "
                    f"{dist.get_world_size(self.process_group)} processes is not supported "
                    "by ember yet; use BatchNorm (per-process statistics) or evaluate in "
                    "eval() mode"
                )
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every ``BatchNorm*d`` replaced by a ``SyncBatchNorm`` holding the
        same parameters, buffers, mode and ``requires_grad`` (PyTorch's helper)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                with ember.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
