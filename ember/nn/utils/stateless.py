"""``torch.nn.utils.stateless``: the pre-2.0 home of ``functional_call``, deprecated in
favour of ``ember.func.functional_call`` (with PyTorch's ``FutureWarning``)."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__ = ["functional_call"]


def functional_call(
    module: Any,
    parameters_and_buffers: Any,
    args: Any = None,
    kwargs: Any = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module`` called with ``parameters_and_buffers`` in place of its own, as
    ``ember.func.functional_call``.

    >>> import warnings; warnings.simplefilter("ignore", FutureWarning)
    >>> lin = ember.nn.Linear(1, 1, bias=False)
    >>> params = {"weight": ember.ones(1, 1)}
    >>> ember.nn.utils.stateless.functional_call(lin, params, (ember.ones(1),))
    tensor([1.])
    """
    warnings.warn(
        "nn.utils.stateless.functional_call is deprecated as of PyTorch 2.0; use "
        "ember.func.functional_call instead",
        FutureWarning,
        stacklevel=2,
    )
    func = importlib.import_module("ember.func")  # loaded on first use (NOTE in ember/__init__)
    return func.functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
