"""``ember.fft``: PyTorch's ``torch.fft``, each function the public binding of a registry op
(``fft.rfft`` is ``aten.fft_rfft``, which decomposes into ``_fft_r2c``: NOTE [fft
decompositions] in ``ember/ops/native/fft.py``).

>>> ember.fft.rfft(ember.tensor([1.0, 2.0, 3.0, 4.0]))
tensor([10.+0.j, -2.+2.j, -2.+0.j])
>>> ember.fft.irfft(ember.fft.rfft(ember.tensor([1.0, 2.0, 3.0, 4.0])))
tensor([1., 2., 3., 4.])
"""

from __future__ import annotations

from typing import Any

from ember._bind import make_public
from ember.ops.registry import ops


def _public(op: str) -> Any:
    """The public function of ``aten.<op>`` (overloads resolved as ``ember.<name>``'s)."""
    return make_public(getattr(ops.aten, op), method=False)


# each is PyTorch's ``torch.fft.<name>``, bound to the op of ``python_module: fft``
fft = _public("fft_fft")
ifft = _public("fft_ifft")
rfft = _public("fft_rfft")
irfft = _public("fft_irfft")
hfft = _public("fft_hfft")
ihfft = _public("fft_ihfft")
fft2 = _public("fft_fft2")
ifft2 = _public("fft_ifft2")
rfft2 = _public("fft_rfft2")
irfft2 = _public("fft_irfft2")
fftn = _public("fft_fftn")
ifftn = _public("fft_ifftn")
rfftn = _public("fft_rfftn")
irfftn = _public("fft_irfftn")
fftfreq = _public("fft_fftfreq")
rfftfreq = _public("fft_rfftfreq")
fftshift = _public("fft_fftshift")
ifftshift = _public("fft_ifftshift")

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
    "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip
