"""PyTorch's ``poisson`` draws in one compiled loop that runs the Mersenne Twister itself.

# NOTE [poisson on the twister]
How many 64-bit draws a Poisson value uses depends on the values drawn (NOTE [poisson
stream] in ``torch_stream.py``), so a loop over a block of draws taken ahead must guess the
block's size, put the generator back and advance it again by the draws it used: every
output was made twice, and a guess too small meant starting over. This loop instead takes
NumPy's ``MT19937`` state (624 words and the position), makes each output when the
algorithm asks for it (MT19937's recurrence and tempering, as ``ember/_mt19937.py``), and
gives the state back: each output made once, the generator left exactly after the last
draw used. The arithmetic of the two algorithms is PyTorch's, unchanged. Imported on first
use (NOTE [numba on first use]).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ember._mt19937 import _N, _twist

_LOW53 = np.uint64(2**53 - 1)
_S53 = 1.0 / 9007199254740992.0  # 2^-53


@numba.njit(cache=True)
def draw(rates: np.ndarray, out: np.ndarray, mt: np.ndarray, pos: int) -> int:  # pragma: no cover
    """Fill ``out`` with a draw for each of ``rates`` (in order), advancing the state
    ``mt``/``pos`` in place; returns the new position.

    One place makes the uniforms (a call per output would cost a reference count of ``mt``
    each, ten times the output's own work), so each element is a small state machine fed
    one uniform at a time: the product method's next factor, or the rejection method's
    ``u`` then ``v``."""
    n = rates.shape[0]
    i = 0
    while i < n:
        lam = rates[i]
        if lam == 0:
            out[i] = 0
            i += 1
            continue
        big = lam >= 10
        enlam = 0.0 if big else math.exp(-lam)  # the product method's bound
        x = 0
        prod = 1.0
        loglam = a = b = invalpha = vr = 0.0
        if big:  # Hoermann's transformed rejection's constants
            loglam = math.log(lam)
            b = 0.931 + 2.53 * math.sqrt(lam)
            a = -0.059 + 0.02483 * b
            invalpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2)
        u = 0.0
        have_u = False
        while True:
            r = np.uint64(0)  # random64(): two outputs, the first in the high half
            for _ in range(2):
                if pos >= _N:
                    _twist(mt)
                    pos = 0
                y = mt[pos]
                pos += 1
                y ^= y >> np.uint32(11)
                y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
                y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
                y ^= y >> np.uint32(18)
                r = (r << np.uint64(32)) | np.uint64(y)
            uniform = float(r & _LOW53) * _S53
            if not big:
                prod *= uniform
                if prod > enlam:
                    x += 1
                    continue
                out[i] = x
                break
            if not have_u:
                u = uniform - 0.5
                have_u = True
                continue
            have_u = False
            v = uniform
            us = 0.5 - abs(u)
            k = np.int64(math.floor((2 * a / us + b) * u + lam + 0.43))
            if us >= 0.07 and v <= vr:
                out[i] = k
                break
            if k < 0 or (us < 0.013 and v > us):
                continue
            if math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b) <= (
                -lam + k * loglam - math.lgamma(k + 1.0)
            ):
                out[i] = k
                break
        i += 1
    return pos
