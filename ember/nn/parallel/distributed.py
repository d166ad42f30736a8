"""``DistributedDataParallel``: one model per process, gradients averaged across processes
during backward, as PyTorch's.

# NOTE [DDP's reducer]
At construction every parameter and buffer is broadcast from the group's first rank, and a
post-accumulate-grad hook goes on each parameter that requires grad. During backward, each
hook marks its parameter ready; when all the parameters of a bucket are ready (NOTE in
``_buckets.py``) and every bucket before it has started, its gradients are copied into the
bucket's flat array and an asynchronous ``all_reduce`` starts, so communication overlaps the
rest of the backward (MPI progresses when polled: each hook polls the transfers in flight).
The first hook of a backward queues a final callback on the autograd engine (NOTE [final
callbacks]); when backward ends it starts any bucket left (with ``find_unused_parameters``,
zeros stand for the gradients that never came), waits for every all-reduce, and writes the
averages into each parameter's ``.grad``. Buckets start in the same order on every rank, so
the collectives always pair up. Inside ``no_sync()`` hooks do nothing: gradients accumulate
locally and the first synchronized backward after it averages the accumulated sums.
"""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import ember
import ember.distributed as dist
from ember._shape_only import ShapeOnlyArray
from ember._tensor import VALUE_READ_HOOK, Tensor
from ember.autograd.engine import queue_callback
from ember.distributed._buffers import store, values
from ember.nn.modules.module import Module
from ember.nn.parallel._buckets import Bucket, assign

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Wrap ``module`` so that ``backward()`` averages its gradients over the process group.

    >>> ddp = DistributedDataParallel(model)  # after init_process_group  # doctest: +SKIP
    >>> loss_fn(ddp(x), y).backward()  # every rank now holds the mean gradient  # doctest: +SKIP

    Each rank feeds its own part of the batch (``DistributedSampler``); with the same
    optimizer on every rank, the parameters stay equal. Gradients are all-reduced in buckets
    of ``bucket_cap_mb`` megabytes as backward produces them. NOTE [DDP's reducer]
    ``device_ids``, ``output_device``, ``gradient_as_bucket_view`` and ``static_graph`` are
    accepted for PyTorch's scripts and change nothing (one CPU device per process).
    Wrap a compiled module as ``DistributedDataParallel(ember.compile(model))``.
    """

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        delay_all_reduce_named_params: Any = None,
        param_to_hook_all_reduce: Any = None,
        mixed_precision: Any = None,
        device_mesh: Any = None,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                f"DistributedDataParallel wraps an nn.Module, got {type(module).__name__}"
            )
        pg = process_group if process_group is not None else dist.group.WORLD
        if pg is None:
            raise ValueError(
                "DistributedDataParallel: Default process group has not been initialized, "
                "please make sure to call init_process_group."
            )
        self.module = module
        self.process_group = pg
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        self._src = dist.get_global_rank(pg, 0)
        self._world = dist.get_world_size(pg)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        with ember.no_grad():  # every rank starts from the first rank's weights
            for _, t in [*module.named_parameters(), *module.named_buffers()]:
                dist.broadcast(t, src=self._src, group=pg)
        self._buckets: list[Bucket] = assign(named, self.bucket_bytes_cap)
        self._where: dict[int, tuple[Bucket, int]] = {}
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._where[id(p)] = (b, i)
        # the hooks hold the wrapper weakly, and go when it does: wrapping the module again
        # later does not reduce twice
        hook = functools.partial(_hook, weakref.ref(self))
        self._handles = [p.register_post_accumulate_grad_hook(hook) for _, p in named]
        weakref.finalize(self, _remove, self._handles)
        self._sync = True  # whether the backward of the last forward synchronizes
        self._launched = 0  # buckets started in the running backward
        self._works: list[Any] = []
        self._active = False  # a backward's final callback is queued
        self._comm_wait_seconds = 0.0  # time the final callbacks waited (benchmarks read it)

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if VALUE_READ_HOOK[0] is None:  # not while ember.compile traces it (runs once)
            self._sync = self.require_backward_grad_sync
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._sync_buffers()
        return self.module(*inputs, **kwargs)

    def _sync_buffers(self) -> None:
        """The first rank's buffers (running statistics...) into every rank's, one broadcast
        per dtype. Not while ``ember.compile`` traces this module (its buffers are then
        tensors without values, and the compiled graph holds no collective): the buffers of
        ``ember.compile(DistributedDataParallel(m))`` are broadcast at construction only."""
        if VALUE_READ_HOOK[0] is not None:  # tracing (make_fx)
            return
        by_dtype: dict[Any, list[Tensor]] = {}
        for b in self.module.buffers():
            if isinstance(b._edata, ShapeOnlyArray):
                return
            by_dtype.setdefault(b.dtype, []).append(b)
        for tensors in by_dtype.values():
            flat = ember.from_numpy(
                np.concatenate([values(t, "broadcast").reshape(-1) for t in tensors])
            )
            dist.broadcast(flat, src=self._src, group=self.process_group)
            start = 0
            data = flat.numpy()
            for t in tensors:
                n = t.numel()
                t._bump_version()
                store(t, data[start : start + n])
                start += n

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes of forwards run inside this block only accumulate gradients
        locally; the first synchronized backward after it averages the sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ------------------------------------------------------------------ backward
    def _on_grad(self, p: Tensor) -> None:
        """A parameter's gradient is complete for this backward. NOTE [DDP's reducer]"""
        if not (self._sync and self.require_backward_grad_sync):  # (compiled: no forward ran)
            return
        if not self._active:
            self._active = True
            queue_callback(self._finish)
        bucket, i = self._where[id(p)]
        bucket.ready.add(i)
        self._start_ready()
        for w in self._works:  # let MPI progress the transfers in flight
            w.is_completed()

    def _start_ready(self, everything: bool = False) -> None:
        """Start the buckets, in order, that are complete (all of them: ``everything``)."""
        buckets = self._buckets
        while self._launched < len(buckets):
            b = buckets[self._launched]
            if not everything and len(b.ready) < len(b.params):
                return
            for i, p in enumerate(b.params):
                g = p.grad
                if g is None:
                    b.part(i)[...] = 0
                else:
                    np.copyto(b.part(i), values(g, "all_reduce").reshape(b.part(i).shape))
            self._works.append(dist.all_reduce(b.tensor, group=self.process_group, async_op=True))
            self._launched += 1

    def _finish(self) -> None:
        """At the end of backward: start what is left, wait, write the averages."""
        self._active = False
        try:
            missing = [
                b.names[i]
                for b in self._buckets[self._launched :]
                for i in range(len(b.params))
                if i not in b.ready
            ]
            if missing and not self.find_unused_parameters:
                raise RuntimeError(
                    "DistributedDataParallel: these parameters got no gradient in this "
                    f"backward: {missing}. Pass find_unused_parameters=True if the forward "
                    "does not use every parameter (or make the loss depend on them)."
                )
            self._start_ready(everything=True)
            used = None
            if self.find_unused_parameters:
                flags = ember.tensor(
                    [int(p.grad is not None) for b in self._buckets for p in b.params],
                    dtype=ember.int32,
                )
                self._works.append(
                    dist.all_reduce(flags, dist.ReduceOp.MAX, self.process_group, True)
                )
            start = time.perf_counter()
            for w in self._works:
                w.wait()
            self._comm_wait_seconds += time.perf_counter() - start
            if self.find_unused_parameters:
                used = flags.numpy().tolist()
            self._write_back(used)
        finally:
            self._works = []
            self._launched = 0
            for b in self._buckets:
                b.ready.clear()

    def _write_back(self, used: list[int] | None) -> None:
        n = self._world
        k = 0
        for b in self._buckets:
            for i, p in enumerate(b.params):
                avg = b.part(i)
                if used is not None and not used[k]:
                    k += 1
                    continue  # no rank had a gradient: it stays None, as PyTorch's
                k += 1
                g = p.grad
                if g is None:
                    p.grad = ember.from_numpy(avg / n).to(p.device)
                elif type(g._edata) is np.ndarray:
                    g._bump_version()
                    np.divide(avg, n, out=g._edata, casting="unsafe")
                else:
                    g._bump_version()
                    store(g, avg / n)


def _hook(ref: weakref.ref[DistributedDataParallel], p: Tensor) -> None:
    ddp = ref()
    if ddp is not None:
        ddp._on_grad(p)


def _remove(handles: list[Any]) -> None:
    for h in handles:
        h.remove()
