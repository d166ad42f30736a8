"""Random number generation: ``Generator``, ``manual_seed``, the default generator.

Each ``Generator`` holds PyTorch's CPU generator state: a 32-bit Mersenne Twister (NumPy's
``MT19937`` bit generator, seeded as the legacy ``RandomState(seed)`` is, which is how PyTorch
seeds its own) and the cached second value of the scalar Box-Muller path. The kernels in
``ember/backends/cpu/torch_stream.py`` turn its raw 32-bit outputs into PyTorch's values.

# NOTE [generator state]
``get_state()`` returns PyTorch's 5056-byte CPU state tensor (``CPUGeneratorImplState``),
little-endian: the seed (8), ``left`` (4), ``seeded`` (4), ``next`` (8), the 624 state
words (8 each), ``normal_x``/``normal_y``/``normal_rho`` (8 each; ``normal_y`` holds the
cached double normal), ``normal_is_valid`` (4), padding (4), the cached float normal (4),
its valid flag (1), padding (3). ``torch.set_rng_state`` accepts ember's state and the
reverse. NumPy's ``pos`` is PyTorch's ``next``; ``left`` is ``625 - pos``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ember._graph_break import side_effect
from ember._tensor import Tensor, wrap
from ember.device import as_device, device

# (fork_rng stays ember.random.fork_rng, as PyTorch's is torch.random.fork_rng only)
__all__ = [
    "Generator",
    "default_generator",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed, so initial_seed() agrees
_U64 = 2**64
_STATE_BYTES = 5056
_LEGACY_STATE_BYTES = 5048
_N = 624
_BULK = 16384  # draws from this size on run the compiled loop (NOTE [bulk mt19937])


def _mt(seed: int) -> np.random.MT19937:
    """An MT19937 bit generator seeded as PyTorch's CPU generator is (the low 32 bits)."""
    bitgen = np.random.MT19937()
    bitgen._legacy_seeding(seed & 0xFFFFFFFF)
    return bitgen


class Generator:
    """A source of random numbers for the random ops (``generator=`` argument).

    >>> g = ember.Generator().manual_seed(0)
    >>> ember.rand(2, generator=g).shape
    ember.Size([2])
    """

    __slots__ = ("_device", "_seed", "_np", "_mt", "_next_double", "_next_float")

    def __init__(self, device: Any = "cpu") -> None:
        self._device = as_device(device)
        self._reseed(_DEFAULT_SEED)

    def _reseed(self, seed: int) -> None:
        # NOTE [compile side effects]: made or reseeded at trace time only, a compiled
        # graph would draw on from one state where each call starts afresh
        side_effect("the function makes or reseeds a random number Generator")
        self._seed = seed
        self._mt = _mt(seed)
        self._np = np.random.Generator(self._mt)  # ops not yet on PyTorch's streams
        self._next_double: float | None = None
        self._next_float: float | None = None

    def _raw(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit outputs (uint32 array), as PyTorch's ``random()`` gives them."""
        if n < _BULK:  # NOTE [bulk mt19937]
            return self._mt.random_raw(n).astype(np.uint32) if n else np.zeros(0, np.uint32)
        from ember import _mt19937  # numba's: NOTE [numba on first use]

        return _mt19937.raw(self._mt, n)

    def _raw64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit values (uint64) as PyTorch's ``random64()`` makes them: two
        outputs, the first in the high half."""
        r = self._raw(2 * n).astype(np.uint64).reshape(n, 2)
        return (r[:, 0] << np.uint64(32)) | r[:, 1]

    @property
    def device(self) -> device:
        return self._device

    def manual_seed(self, seed: int) -> Generator:
        """Reseed: the same seed gives the same stream of values; returns the generator.

        >>> ember.Generator().manual_seed(42).initial_seed()
        42
        """
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"manual_seed expected an int seed, got {type(seed).__name__}")
        seed = int(seed)
        if not -(2**63) <= seed < _U64:
            raise RuntimeError(
                f"Overflow when unpacking long long: seed must be within the range "
                f"[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff], got {seed}"
            )
        self._reseed(seed % _U64)
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed.

        >>> isinstance(ember.Generator().seed(), int)
        True
        """
        new = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(new)
        return new

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with.

        >>> ember.Generator().initial_seed()
        67280421310721
        """
        return self._seed

    def get_state(self) -> Tensor:
        """The full state as PyTorch's uint8 state tensor (NOTE [generator state]).

        >>> ember.Generator().get_state().shape
        ember.Size([5056])
        """
        st = self._mt.state["state"]
        pos = int(st["pos"])
        key = np.asarray(st["key"], np.uint32)
        nxt = pos
        if pos == _N and np.array_equal(key, _mt(self._seed).state["state"]["key"]):
            nxt = 0  # freshly seeded: PyTorch's next is 0 until the first draw
        out = np.zeros(_STATE_BYTES, np.uint8)
        out[0:8] = np.frombuffer(int(self._seed).to_bytes(8, "little"), np.uint8)
        out[8:12] = np.frombuffer(np.int32(_N + 1 - pos).tobytes(), np.uint8)
        out[12:16] = np.frombuffer(np.int32(1).tobytes(), np.uint8)
        out[16:24] = np.frombuffer(np.uint64(nxt).tobytes(), np.uint8)
        out[24 : 24 + 8 * _N] = key.astype("<u8").view(np.uint8)
        tail = 24 + 8 * _N  # normal_x, normal_y, normal_rho, normal_is_valid
        if self._next_double is not None:
            out[tail + 8 : tail + 16] = np.frombuffer(
                np.float64(self._next_double).tobytes(), np.uint8
            )
            out[tail + 24 : tail + 28] = np.frombuffer(np.int32(1).tobytes(), np.uint8)
        if self._next_float is not None:
            out[5048:5052] = np.frombuffer(np.float32(self._next_float).tobytes(), np.uint8)
            out[5052] = 1
        return wrap(out)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from ``get_state()`` (or ``torch.get_rng_state()``); the stream
        continues from that point.

        >>> g = ember.Generator(); s = g.get_state(); a = ember.rand(2, generator=g)
        >>> bool((g.set_state(s) and ember.rand(2, generator=g) == a).all())
        True
        """
        if not isinstance(new_state, Tensor) or new_state.dtype.name != "uint8":
            raise TypeError(
                "expected a torch.ByteTensor-like uint8 tensor from Generator.get_state(), got "
                f"{type(new_state).__name__}"
                + (f" of dtype {new_state.dtype}" if isinstance(new_state, Tensor) else "")
            )
        raw = np.ascontiguousarray(new_state._value_array("set_state")).reshape(-1)
        if raw.size not in (_STATE_BYTES, _LEGACY_STATE_BYTES):
            raise RuntimeError(
                f"Expected either a THGeneratorState of size {_LEGACY_STATE_BYTES} or a "
                f"CPUGeneratorImplState of size {_STATE_BYTES} (from get_state()) but found the "
                f"input RNG state size to be {raw.size}"
            )
        b = raw.tobytes()
        seed = int.from_bytes(b[0:8], "little")
        left = int.from_bytes(b[8:12], "little", signed=True)
        if not 1 <= left <= _N + 1:
            raise RuntimeError(f"set_state: invalid mt19937 state, left={left} (expected 1..625)")
        key = np.frombuffer(b[24 : 24 + 8 * _N], "<u8").astype(np.uint32)
        tail = 24 + 8 * _N
        bitgen = np.random.MT19937()
        bitgen.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _N + 1 - left}}
        side_effect("the function sets a random number Generator's state")
        self._seed = seed
        self._mt = bitgen
        self._np = np.random.Generator(bitgen)
        valid = int.from_bytes(b[tail + 24 : tail + 28], "little") != 0
        self._next_double = (
            float(np.frombuffer(b[tail + 8 : tail + 16], "<f8")[0]) if valid else None
        )
        self._next_float = None
        if raw.size == _STATE_BYTES and b[5052]:
            self._next_float = float(np.frombuffer(b[5048:5052], "<f4")[0])
        return self

    def __repr__(self) -> str:
        return f"<ember.Generator object at {id(self):#x}>"


default_generator = Generator()


def _source(g: Generator | None) -> Generator:
    """The ember generator a random kernel draws from (the default one for ``None``)."""
    if g is None:
        return default_generator
    if type(g) is not Generator:
        raise TypeError(f"expected an ember.Generator for generator=, got {type(g).__name__}")
    return g


def _generator(g: Generator | None) -> np.random.Generator:
    """A NumPy generator over ``g``'s Mersenne Twister, for the ops whose values do not yet
    follow PyTorch's (they draw from the same stream, with NumPy's transforms)."""
    return _source(g)._np


def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it.

    >>> ember.manual_seed(0)
    <ember.Generator object at ...>
    >>> a = ember.rand(3)
    >>> _ = ember.manual_seed(0)
    >>> bool((ember.rand(3) == a).all())
    True
    """
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed.

    >>> isinstance(ember.seed(), int)
    True
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with.

    >>> _ = ember.manual_seed(7); ember.initial_seed()
    7
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state, a uint8 tensor (see ``Generator.get_state``).

    >>> ember.get_rng_state().dtype
    ember.uint8
    """
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from ``get_rng_state()``.

    >>> s = ember.get_rng_state(); a = ember.rand(2); ember.set_rng_state(s)
    >>> bool((ember.rand(2) == a).all())
    True
    """
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(
    devices: Any = None, enabled: bool = True, device_type: str = "cpu", **_: Any
) -> Iterator[None]:
    """Run a block with the default generator's state restored on exit, as
    ``torch.random.fork_rng`` does for the CPU generator.

    >>> _ = ember.manual_seed(0)
    >>> with ember.random.fork_rng():
    ...     _ = ember.rand(5)
    >>> a = ember.rand(1); _ = ember.manual_seed(0)
    >>> bool(ember.rand(1) == a)
    True
    """
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
