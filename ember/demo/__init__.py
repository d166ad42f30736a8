"""The demo ``python -m ember`` runs: train an MLP and a CNN on the UCI hand-written digits,
report accuracy, time per epoch and size, then trace the aten ops one training step
dispatches.

One concept per module, in dependency order: ``data`` (the digits and their split),
``models`` (the two networks and how each is trained), ``modes`` (how a model is run: eager
today), ``train`` (epochs, progress bar, accuracy), ``text`` (report layout), ``trace`` (the
dispatch trace of one step), ``options`` (the command line) and ``cli`` (the report).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo and print its report; returns the exit status."""
    # deferred: importing the package stays light, so ``python -m ember --help`` answers
    # from ember.demo.options alone (NOTE [help before import] in ember/__init__.py)
    from ember.demo.cli import main as run

    return run(argv)
