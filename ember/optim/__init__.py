"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``,
``Adamax``, ``NAdam``, ``RAdam``, ``LBFGS``) and learning-rate schedules (``lr_scheduler``).

>>> w = ember.nn.Parameter(ember.ones(2))
>>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
"""

from __future__ import annotations

from ember.optim import lr_scheduler
from ember.optim.adadelta import Adadelta
from ember.optim.adagrad import Adagrad
from ember.optim.adam import Adam
from ember.optim.adamax import Adamax
from ember.optim.adamw import AdamW
from ember.optim.lbfgs import LBFGS
from ember.optim.nadam import NAdam
from ember.optim.optimizer import Optimizer
from ember.optim.radam import RAdam
from ember.optim.rmsprop import RMSprop
from ember.optim.sgd import SGD

__all__ = [
    "LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "Optimizer",
    "RAdam", "RMSprop", "lr_scheduler",
]  # fmt: skip
