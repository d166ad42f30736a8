"""The short-time Fourier transform and its inverse (issue 18): ``stft`` and ``istft``, which
PyTorch composes of other ops (CompositeImplicitAutograd), so their gradients are those of
the parts.

# NOTE [stft]
``stft`` cuts the signal (``(L,)`` or ``(B, L)``) into frames of ``n_fft`` samples every
``hop_length`` (an ``unfold`` view), multiplies each by the window (``win_length`` long,
zero-padded to ``n_fft`` on both sides, ones when none is given) and transforms it: the
one-sided ``rfft`` of a real input and window, else the full ``fft``; ``normalized`` scales
by ``n_fft ** -0.5``. The result is ``(B?, freq, frames)``, complex, or its real view when
``return_complex=False`` (deprecated, as in PyTorch; a real input must say which). With
``center`` (``stft.center``, and ``ember.stft``'s default) the signal is first padded by
``n_fft // 2`` on both sides with ``pad_mode``.
``istft`` inverts it: the inverse transform of each frame, times the window, overlap-added
(``index_add`` at each frame's offset) and divided by the overlap-added squared window, which
must not vanish anywhere (PyTorch's "window overlap add min" error); ``center`` trims
``n_fft // 2`` from both ends, ``length`` trims or zero-pads the end.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

from ember import dtypes
from ember._warn import warn_user
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import by_name, define
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_OPTS = "int? hop_length=None, int? win_length=None, Tensor? window=None"
# fmt: off
define(f"stft(Tensor self, int n_fft, {_OPTS}, bool normalized=False, bool? onesided=None, "
       "bool? return_complex=None, bool? align_to_window=None) -> Tensor", variants=())
define(f"stft.center(Tensor self, int n_fft, {_OPTS}, bool center=True, "
       'str pad_mode="reflect", bool normalized=False, bool? onesided=None, '
       "bool? return_complex=None, bool? align_to_window=None) -> Tensor", variants=())
define(f"istft(Tensor self, int n_fft, {_OPTS}, bool center=True, bool normalized=False, "
       "bool? onesided=None, int? length=None, bool return_complex=False) -> Tensor",
       tags=("data_dependent_output",))  # (the window check reads values, as PyTorch's)
# fmt: on

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd
_BY_ROOT_N, _BY_N, _NONE = 1, 2, 0  # PyTorch's fft_norm_mode values
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warn_user(message)


def _describe(self: Tensor, n_fft: int, hop: int, win: int) -> str:
    shape = list(self.shape)
    return f"stft(tensor of shape {shape}, n_fft={n_fft}, hop_length={hop}, win_length={win})"


def _padded_window(
    window: Tensor | None, n_fft: int, win_length: int, like: Tensor, api: str
) -> Tensor | None:
    """The window zero-padded to ``n_fft`` on both sides (None: a rectangular window)."""
    if window is None:
        if win_length == n_fft:
            return None
        real = like.dtype.to_real() if like.dtype.is_complex else like.dtype
        window = aten.ones.default([win_length], dtype=real, device=like.device)
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(
            f"{api}: expected a 1D window tensor of size equal to win_length={win_length}, but "
            f"got window with size {list(window.shape)}"
        )
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = aten.constant_pad_nd.default(window, [left, n_fft - win_length - left], 0.0)
    return window


def _stft(a: SimpleNamespace) -> Tensor:
    """``stft`` and ``stft.center`` (NOTE [stft]); ``a``: the call's arguments by name. With
    ``center`` the signal is first padded by ``n_fft // 2`` on both sides."""
    self, n_fft, window, return_complex = a.self, a.n_fft, a.window, a.return_complex
    if getattr(a, "center", False):
        dim = self.ndim
        if dim not in (1, 2):
            raise RuntimeError(
                f"stft: expected a 1D or 2D tensor, got a tensor of shape {list(self.shape)}"
            )
        extended = aten.view.default(self, [1] * (3 - dim) + list(self.shape))
        pad = n_fft // 2
        padded = aten.pad.default(extended, [pad, pad], a.pad_mode)
        self = aten.view.default(padded, list(padded.shape[-dim:]))
    complex_in = self.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if not return_complex:
        _warn_once(
            "real",
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise "
            "an error.\nNote: you can still call torch.view_as_real on the complex output to "
            "recover the old return format.",
        )
    if window is None:
        _warn_once(
            "window",
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as torch.hann_window or "
            "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
            "device=<device>)`.",
        )
    hop = n_fft // 4 if a.hop_length is None else a.hop_length
    win = n_fft if a.win_length is None else a.win_length
    api = _describe(self, n_fft, hop, win)
    if self.dtype.category < dtypes.FLOATING:
        raise RuntimeError(f"{api} : expected a tensor of floating point or complex values")
    if self.ndim not in (1, 2):
        raise RuntimeError(f"{api} : expected a 1D or 2D tensor")
    if a.align_to_window:
        raise NotImplementedError(f"{api} : align_to_window=True is not supported by ember yet")
    length = self.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"{api} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{api} : expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"{api} : expected 0 < win_length <= n_fft, but got win_length={win}")
    full = a.onesided is False or complex_in
    if a.onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    w = _padded_window(window, n_fft, win, self, f"{api} ")
    frames = aten.unfold.default(self, -1, n_fft, hop)  # (B?, frames, n_fft), a view
    if w is not None:
        frames = frames * w
    norm = _BY_ROOT_N if a.normalized else _NONE
    if full:
        if not frames.dtype.is_complex:
            frames = aten._fft_r2c.default(frames, [frames.ndim - 1], norm, False)
        else:
            frames = aten._fft_c2c.default(frames, [frames.ndim - 1], norm, True)
    else:
        frames = aten._fft_r2c.default(frames, [frames.ndim - 1], norm, True)
    out = aten.transpose.int(frames, -1, -2)
    return out if return_complex else aten.view_as_real.default(out)


impl(aten.stft.default, _CIA)(by_name(aten.stft.default, _stft))
impl(aten.stft.center, _CIA)(by_name(aten.stft.center, _stft))


def _overlap_add(frames: Tensor, hop: int, total: int) -> Tensor:
    """``frames`` (B, n, n_fft) added into (B, total) at offsets ``0, hop, 2 hop, ...``."""
    n, n_fft = frames.shape[-2], frames.shape[-1]
    start = aten.arange.start_step(0, n * hop, hop, dtype=dtypes.int64, device=frames.device)
    offs = aten.arange.default(n_fft, dtype=dtypes.int64, device=frames.device)
    index = aten.reshape.default(start.unsqueeze(-1) + offs, [-1])
    flat = aten.reshape.default(frames, [frames.shape[0], n * n_fft])
    zeros = aten.zeros.default([frames.shape[0], total], dtype=frames.dtype, device=frames.device)
    return aten.index_add.default(zeros, 1, index, flat)  # type: ignore[no-any-return]


@impl(aten.istft.default, _CIA)
def istft(
    self: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The signal whose ``stft`` is ``self``: inverse transforms overlap-added and divided
    by the overlap-added squared window (NOTE [stft]).

    >>> x = ember.arange(16.0)
    >>> w = ember.hann_window(8)
    >>> y = ember.istft(ember.stft(x, 8, window=w, return_complex=True), 8, window=w)
    >>> bool((y - x).abs().max() < 1e-4)
    True
    """
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    api = (
        f"istft(tensor of shape {list(self.shape)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win})"
    )
    if not self.dtype.is_complex:
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    if window is None:
        _warn_once(
            "iwindow",
            "A window was not provided. A rectangular window will be applied.Please provide the "
            "same window used by stft to make the inversion lossless.To suppress this warning "
            "and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
            "device=<device>)`.",
        )
    if self.ndim not in (2, 3) or self.numel() == 0:
        raise RuntimeError(
            f"{api}: expected a tensor with a 3rd dimension of size 2 or a non-empty complex "
            "tensor of 2 or 3 dims (freq, frames) or (batch, freq, frames)"
        )
    batched = self.ndim == 3
    x = self if batched else self.unsqueeze(0)
    n_freq, n_frames = x.shape[-2], x.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided and n_fft // 2 + 1 != n_freq:
        raise RuntimeError(
            f"{api}: expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft / 2 + 1 when onesided=True, but got {n_freq}"
        )
    if not onesided and n_fft != n_freq:
        raise RuntimeError(
            f"{api}: expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft when onesided=False, but got {n_freq}"
        )
    if hop <= 0 or hop > win:
        raise RuntimeError(f"{api}: expected 0 < hop_length <= win_length")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"{api}: expected 0 < win_length <= n_fft")
    w = _padded_window(window, n_fft, win, x, api)
    x = aten.transpose.int(x, 1, 2)  # (B, frames, freq)
    norm = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if onesided:
            raise RuntimeError(f"{api}: cannot have onesided output if return_complex=True")
        frames = aten._fft_c2c.default(x, [2], norm, False)
    else:
        if w is not None and w.dtype.is_complex:
            raise RuntimeError(f"{api}: Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = aten.slice.Tensor(x, 2, 0, n_fft // 2 + 1)
        frames = aten._fft_c2r.default(x, [2], norm, n_fft)
    real = frames.dtype.to_real() if frames.dtype.is_complex else frames.dtype
    if w is None:
        w = aten.ones.default([n_fft], dtype=real, device=frames.device)
    else:
        frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    y = _overlap_add(frames, hop, total)
    envelope = _overlap_add(
        aten.expand.default((w * w).unsqueeze(0), [1, n_frames, n_fft]), hop, total
    )
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y = aten.slice.Tensor(y, 1, start, end)
    envelope = aten.slice.Tensor(envelope, 1, start, end)
    if envelope.device.type == "meta":  # as PyTorch's: its check reads values
        raise NotImplementedError(
            "istft: the window overlap-add check reads values, which meta tensors do not have "
            "(run istft on cpu tensors)"
        )
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(
            f"{api}: window overlap add min: the overlap-added squared window vanishes "
            "somewhere, so the signal cannot be recovered there (use a window without zeros "
            "at the overlaps, or a smaller hop_length)"
        )
    y = y / envelope
    if not batched:
        y = y.squeeze(0)
    if end > total:
        y = aten.constant_pad_nd.default(y, [0, end - total], 0.0)
    return y  # type: ignore[no-any-return]
