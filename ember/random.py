"""Random number generation: ``Generator``, ``manual_seed``, the default generator.

Each ``Generator`` wraps a ``numpy.random.Generator`` over the PCG64 bit generator. The same
seed gives the same values on every run, but not PyTorch's values: ember does not reproduce
PyTorch's Philox/MT19937 streams, only their distributions.

# NOTE [generator state]
``get_state()`` returns a uint8 tensor of 56 bytes, little-endian: the seed (8), the PCG64
state (16) and increment (16), the buffered-uint32 flag (8) and buffered value (8).
``set_state`` reads the same layout back.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ember._tensor import Tensor, wrap
from ember.device import as_device, device

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
_STATE_BYTES = 56


class Generator:
    """A source of random numbers for the random ops (``generator=`` argument).

    >>> g = ember.Generator().manual_seed(0)
    >>> ember.rand(2, generator=g).shape
    ember.Size([2])
    """

    __slots__ = ("_device", "_seed", "_np")

    def __init__(self, device: Any = "cpu") -> None:
        self._device = as_device(device)
        self._seed = _DEFAULT_SEED
        self._np = np.random.Generator(np.random.PCG64(_DEFAULT_SEED))

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
        self._seed = seed % _U64
        self._np = np.random.Generator(np.random.PCG64(self._seed))
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
        """The full state as a uint8 tensor (NOTE [generator state]).

        >>> ember.Generator().get_state().shape
        ember.Size([56])
        """
        st = self._np.bit_generator.state
        fields = (
            (self._seed, 8),
            (st["state"]["state"], 16),
            (st["state"]["inc"], 16),
            (st["has_uint32"], 8),
            (st["uinteger"], 8),
        )
        raw = b"".join(int(v).to_bytes(n, "little") for v, n in fields)
        return wrap(np.frombuffer(raw, np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from ``get_state()``; the stream continues from that point.

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
        raw = np.ascontiguousarray(new_state._values("set_state")).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(
                f"Expected a generator state of {_STATE_BYTES} bytes (from get_state()), got "
                f"{len(raw)}"
            )

        def field(lo: int, hi: int) -> int:
            return int.from_bytes(raw[lo:hi], "little")

        bitgen = np.random.PCG64()
        bitgen.state = {
            "bit_generator": "PCG64",
            "state": {"state": field(8, 24), "inc": field(24, 40)},
            "has_uint32": field(40, 48),
            "uinteger": field(48, 56),
        }
        self._seed = field(0, 8)
        self._np = np.random.Generator(bitgen)
        return self

    def __repr__(self) -> str:
        return f"<ember.Generator object at {id(self):#x}>"


default_generator = Generator()


def _generator(g: Generator | None) -> np.random.Generator:
    """The NumPy generator a random kernel draws from (the default one for ``None``)."""
    if g is None:
        return default_generator._np
    if type(g) is not Generator:
        raise TypeError(f"expected an ember.Generator for generator=, got {type(g).__name__}")
    return g._np


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
