"""PyTorch's 32-bit Mersenne Twister outputs in bulk: a numba loop over NumPy's ``MT19937``
state.

# NOTE [bulk mt19937]
``np.random.MT19937.random_raw`` gives the same outputs as PyTorch's ``random()`` (the
recurrence and tempering are MT19937's), but calls the bit generator once per value; for a
large draw, reading the state (624 words and the position), running the recurrence in one
compiled loop and writing the state back is several times faster. Reading and writing the
state costs about 0.1 ms, so ``Generator._raw`` keeps draws below 16384 values on
``random_raw`` (and imports this module, and numba, only for a larger one).
"""

from __future__ import annotations

import numba
import numpy as np

_N = 624
_M = 397


@numba.njit(cache=True)
def _twist(mt: np.ndarray) -> None:  # pragma: no cover - compiled
    upper, lower, matrix = np.uint32(0x80000000), np.uint32(0x7FFFFFFF), np.uint32(0x9908B0DF)
    one, zero = np.uint32(1), np.uint32(0)
    for i in range(_N):
        y = (mt[i] & upper) | (mt[(i + 1) % _N] & lower)
        mt[i] = mt[(i + _M) % _N] ^ (y >> one) ^ ((zero - (y & one)) & matrix)


@numba.njit(cache=True)
def _draw(mt: np.ndarray, pos: int, out: np.ndarray) -> int:  # pragma: no cover - compiled
    n = out.size
    k = 0
    while k < n:
        if pos >= _N:
            _twist(mt)
            pos = 0
        stop = min(_N, pos + n - k)
        for i in range(pos, stop):
            y = mt[i]
            y ^= y >> np.uint32(11)
            y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
            y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
            y ^= y >> np.uint32(18)
            out[k] = y
            k += 1
        pos = stop
    return pos


def raw(bitgen: np.random.MT19937, n: int) -> np.ndarray:
    """The next ``n`` 32-bit outputs of ``bitgen`` (uint32), advancing it (NOTE [bulk
    mt19937])."""
    st = bitgen.state["state"]
    key = np.array(st["key"], np.uint32)
    out = np.empty(n, np.uint32)
    pos = _draw(key, int(st["pos"]), out)
    bitgen.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
    return out
