"""The functions a lowered lazy graph calls besides ops: storage views, copies and writes,
on ndarrays (NOTE [lowering] in ``ember/lazy/lowering.py``).

Each carries what the passes need to know (``ember/compiler/effects.py``):
``_ember_mutates`` (argument positions it writes), ``_ember_alias`` (the argument whose
storage its result may share), ``_ember_pure``.

>>> from ember.compiler.array_ops import view
>>> import numpy as np
>>> base = np.arange(6.0).reshape(2, 3)
>>> view(base, (3, 1), (3, 2), base.dtype, (8, 24), 0)  # the transpose, by geometry
array([[0., 3.],
       [1., 4.],
       [2., 5.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.compiler import layout

__all__ = ["view", "copy", "copy_laid_out", "laid_out", "write_region_"]


def view(
    base: np.ndarray,
    base_strides: tuple[int, ...],
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    strides: tuple[int, ...],
    offset: int,
) -> np.ndarray:
    """The view (shape, dtype, strides and offset in bytes) of the storage of ``base``
    laid out by ``base_strides`` (in elements)."""
    return layout.window(layout.laid_out(base, base_strides), shape, dtype, strides, offset)


def copy(x: np.ndarray) -> np.ndarray:
    """A new array with ``x``'s values and layout (what an op that writes is given)."""
    return np.array(x, copy=True, order="K")


def copy_laid_out(x: np.ndarray, strides: tuple[int, ...]) -> np.ndarray:
    """A new array with ``x``'s values, laid out by ``strides`` (in elements)."""
    new = layout.fresh(x.shape, strides, x.dtype)
    new[...] = x
    return new


def laid_out(x: np.ndarray, strides: tuple[int, ...]) -> np.ndarray:
    """``x`` itself when it has ``strides`` (in elements), else a copy that has them."""
    return layout.laid_out(x, strides)


def write_region_(
    dst: np.ndarray,
    value: np.ndarray,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    strides: tuple[int, ...],
    offset: int,
) -> None:
    """Write ``value`` into the view (shape, dtype, strides, offset) of ``dst``'s storage."""
    layout.window(dst, shape, dtype, strides, offset)[...] = value


view._ember_alias = 0  # type: ignore[attr-defined]
view._ember_pure = True  # type: ignore[attr-defined]
laid_out._ember_alias = 0  # type: ignore[attr-defined]
laid_out._ember_pure = True  # type: ignore[attr-defined]
copy._ember_pure = True  # type: ignore[attr-defined]
copy_laid_out._ember_pure = True  # type: ignore[attr-defined]
write_region_._ember_mutates = (0,)  # type: ignore[attr-defined]
