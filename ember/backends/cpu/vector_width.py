"""The width in bytes of PyTorch's CPU vectors (``at::vec::Vectorized``) on this machine.

A few PyTorch 2.13 CPU kernels give values that depend on it: elements handled in whole
vectors and the scalar tail after them follow different rules (NOTE [attention NaN rows] in
``ember/backends/cpu/attention.py``). PyTorch picks AVX512 (64-byte vectors) where the CPU
has avx512f, avx512bw, avx512vl and avx512dq, else 32-byte vectors (AVX2, and its
``default`` build, whose emulated vectors are 32 bytes too); ``ATEN_CPU_CAPABILITY`` set to
``avx2`` or ``default`` lowers it, as it does PyTorch's."""

from __future__ import annotations

import functools
import os

_AVX512 = frozenset(("avx512f", "avx512bw", "avx512vl", "avx512dq"))


def _cpu_flags() -> frozenset[str]:
    """The x86 feature flags of ``/proc/cpuinfo`` (empty where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


@functools.cache
def vector_bytes() -> int:
    """64 where PyTorch's CPU kernels run with AVX512 vectors, else 32."""
    cap = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower()
    if cap in ("default", "avx2"):
        return 32
    return 64 if _AVX512 <= _cpu_flags() else 32


def vector_size(itemsize: int) -> int:
    """How many elements of ``itemsize`` bytes one PyTorch CPU vector holds."""
    return vector_bytes() // itemsize
