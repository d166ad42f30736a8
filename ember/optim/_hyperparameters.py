"""The range checks of optimizer hyperparameters, with PyTorch's messages.

>>> from ember.optim._hyperparameters import check_hyperparameters
>>> check_hyperparameters("Adam", lr=-1.0)
Traceback (most recent call last):
...
ValueError: Invalid learning rate: -1.0
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_hyperparameters"]

#: what PyTorch's message calls each hyperparameter that must not be negative
_NON_NEGATIVE = {
    "lr": "learning rate",
    "eps": "epsilon value",
    "weight_decay": "weight_decay value",
    "momentum": "momentum value",
    "momentum_decay": "momentum_decay value",
    "alpha": "alpha value",
    "lr_decay": "lr_decay value",
    "initial_accumulator_value": "initial_accumulator_value value",
}


def check_hyperparameters(optimizer: str, **values: Any) -> None:
    """Raise PyTorch's ``ValueError`` for the first value out of its range: the names of
    ``_NON_NEGATIVE`` must be ``>= 0``, ``rho`` in ``[0, 1]``, each of ``betas`` in
    ``[0, 1)``, ``etas`` a pair with ``0 < etas[0] < 1 < etas[1]``. Checked in the order
    given, as each optimizer's constructor does."""
    for name, value in values.items():
        if name in _NON_NEGATIVE:
            if not 0.0 <= value:
                raise ValueError(f"Invalid {_NON_NEGATIVE[name]}: {value}")
        elif name == "rho":
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Invalid rho value: {value}")
        elif name == "etas":
            if not 0.0 < value[0] < 1.0 < value[1]:
                raise ValueError(f"Invalid eta values: {value[0]}, {value[1]}")
        elif name == "betas":
            for i, beta in enumerate(value):
                if not 0.0 <= beta < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        else:
            raise TypeError(f"{optimizer}: no range is known for hyperparameter {name!r}")
