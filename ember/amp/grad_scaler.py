"""``torch.amp.GradScaler``: loss scaling, so small float16 gradients do not flush to zero.

>>> scaler = ember.amp.GradScaler("cpu", init_scale=8.0)
>>> scaler.scale(ember.tensor(1.5))
tensor(12.)

An iteration is ``scaler.scale(loss).backward()``, ``scaler.step(optimizer)`` (which unscales
the gradients first unless ``unscale_`` did, and skips ``optimizer.step()`` when any of them
is inf or NaN) and ``scaler.update()`` (which halves the scale after a skipped step and
doubles it after ``growth_interval`` steps without one), as PyTorch's. The scale and the
growth tracker are tensors on the device of the first scaled output.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable
from enum import Enum
from typing import Any

from ember import dtypes
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.ops.registry import ops

__all__ = ["GradScaler", "OptState"]

_aten = ops.aten


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale a loss before backward, unscale gradients before the step, skip steps with
    inf/NaN gradients and adapt the scale (``device`` is "cpu"; "cuda" warns and disables
    itself, as PyTorch's without CUDA)."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        elif device not in ("cpu", "cuda"):
            raise RuntimeError(
                f"GradScaler: device {device!r} is not supported: ember computes on the CPU; "
                "use GradScaler('cpu')"
            )
        if self._enabled:
            if not growth_factor > 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(_fresh_state)

    # ------------------------------------------------------------------ scaling
    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        fix = (
            "This may indicate your script did not use scaler.scale(loss or outputs) earlier "
            "in the iteration."
        )
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _scale_on(self, device: Any) -> Tensor:
        """The scale (made on ``device`` by the first call), on ``device``."""
        if self._scale is None:
            self._lazy_init(device)
        assert self._scale is not None
        return self._scale.to(device=device)

    def _lazy_init(self, device: Any) -> None:
        self._scale = _aten.full.default(
            [], float(self._init_scale), dtype=dtypes.float32, device=device
        )
        self._growth_tracker = _aten.full.default(
            [], int(self._init_growth_tracker), dtype=dtypes.int32, device=device
        )

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or tensors in lists and tuples) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale_on(outputs.device)

        def apply(val: Any) -> Any:
            if isinstance(val, Tensor):
                return val * self._scale_on(val.device)
            if isinstance(val, Iterable):
                iterable = map(apply, val)
                return type(val)(iterable) if isinstance(val, (list, tuple)) else iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads_(
        self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor, allow_fp16: bool
    ) -> dict[Any, Tensor]:
        """Multiply every gradient by ``inv_scale`` in place; ``found_inf`` becomes 1 if
        any is inf or NaN. One flag per device (here: "cpu")."""
        per_device: dict[Any, Tensor] = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if grad.is_sparse:
                        if grad.dtype is dtypes.float16:
                            param.grad = grad = grad.coalesce()
                        grad = grad._values()
                    flag = per_device.get(grad.device)
                    if flag is None:
                        flag = per_device[grad.device] = found_inf.to(grad.device)
                    if not bool(_aten.isfinite.default(grad).all()):
                        flag.fill_(1.0)
                    grad.mul_(inv_scale.to(grad.device))
        return per_device

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (once per ``update``), e.g.
        before clipping them."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        assert self._scale is not None
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _aten.full.default([], 0.0, dtype=dtypes.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)`` on unscaled gradients, skipped (returning
        None) if any gradient is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Adapt the scale after an iteration: times ``backoff_factor`` if a step was skipped,
        times ``growth_factor`` after ``growth_interval`` steps in a row without one; or set
        it to ``new_scale``."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                    "torch.FloatTensor with requires_grad=False."
                )
                assert new_scale.device.type == self._device, reason
                assert new_scale.numel() == 1, reason
                assert new_scale.requires_grad is False, reason
                scale.copy_(new_scale)
        else:
            found = [
                f.to(device=scale.device)
                for s in self._per_optimizer_states.values()
                for f in s["found_inf_per_device"].values()
            ]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            skipped = sum(float(f.item()) for f in found) > 0
            with no_grad():
                if skipped:
                    scale.mul_(self._backoff_factor)
                    tracker.fill_(0)
                else:
                    successful = int(tracker.item()) + 1
                    if successful == self._growth_interval:
                        grown = float(scale.item()) * self._growth_factor
                        if grown != float("inf"):
                            scale.fill_(grown)
                        tracker.fill_(0)
                    else:
                        tracker.fill_(successful)
        self._per_optimizer_states = defaultdict(_fresh_state)

    # ------------------------------------------------------------------ settings
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """The scale, factors, interval and growth tracker (empty when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if self._per_optimizer_states:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning "
                    "of an iteration, or at the end after scaler.update()."
                )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def deprecated_scaler(device: str) -> type[GradScaler]:
    """``torch.<device>.amp.GradScaler``: ``GradScaler(device, ...)`` with PyTorch's
    FutureWarning naming the spelling to use."""

    class DeprecatedScaler(GradScaler):
        def __init__(
            self,
            init_scale: float = 2.0**16,
            growth_factor: float = 2.0,
            backoff_factor: float = 0.5,
            growth_interval: int = 2000,
            enabled: bool = True,
        ) -> None:
            warnings.warn(
                f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                f"`torch.amp.GradScaler('{device}', args...)` instead.",
                FutureWarning,
                stacklevel=2,
            )
            super().__init__(
                device, init_scale, growth_factor, backoff_factor, growth_interval, enabled
            )

    DeprecatedScaler.__name__ = DeprecatedScaler.__qualname__ = "GradScaler"
    DeprecatedScaler.__module__ = f"ember.{device}.amp"
    DeprecatedScaler.__doc__ = (
        f'``ember.{device}.amp.GradScaler(...)`` is ``ember.amp.GradScaler("{device}", ...)`` '
        "(deprecated)."
    )
    return DeprecatedScaler
