"""The demo ``python -m ember`` runs: train an MLP and a CNN on the UCI hand-written digits,
report accuracy, time per epoch and size, then trace the aten ops one training step
dispatches.

One concept per module, in dependency order: ``data`` (the digits and their split),
``models`` (the two networks and how each is trained), ``modes`` (how a model is run: eager
today), ``train`` (epochs, progress bar, accuracy), ``text`` (report layout), ``trace`` (the
dispatch trace of one step) and ``cli`` (the options and the report).
"""

from ember.demo.cli import main

__all__ = ["main"]
