"""Optimizers (``SGD``, ``Adam``, ``AdamW``) and learning-rate schedules (``lr_scheduler``).

>>> w = ember.nn.Parameter(ember.ones(2))
>>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
"""

from __future__ import annotations

from ember.optim import lr_scheduler
from ember.optim.adam import Adam
from ember.optim.adamw import AdamW
from ember.optim.optimizer import Optimizer
from ember.optim.sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler"]
