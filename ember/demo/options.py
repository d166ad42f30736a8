"""The demo's command line: its parser alone, importing nothing of ember, so that
``python -m ember --help`` answers before the library loads (NOTE [help before import] in
``ember/__init__.py``).

>>> from ember.demo.options import parser
>>> parser().parse_args(["--model", "mlp", "--quick"]).model
'mlp'
"""

from __future__ import annotations

import argparse

__all__ = ["MODE_NAMES", "QUICK_TRAIN", "parser"]

#: the modes the demo trains in, in order (``ember.demo.modes.MODES`` has one for each)
MODE_NAMES = ("eager", "lazy", "compiled")
QUICK_TRAIN = 256  # --quick trains on this many samples for one epoch


def parser() -> argparse.ArgumentParser:
    """``python -m ember``'s options, with their help texts."""
    p = argparse.ArgumentParser(
        prog="python -m ember",
        description="Train an MLP and a CNN on the UCI digits with ember in each mode, "
        "report accuracy, time per epoch and size, then trace the aten ops one training "
        "step dispatches.",
    )
    p.add_argument(
        "--epochs", type=int, help="epochs per model and mode (default: 20; 1 with --quick)"
    )
    p.add_argument(
        "--model",
        choices=("mlp", "cnn", "both"),
        default="both",
        help="the network to train: the MLP, the CNN or both (default: both)",
    )
    p.add_argument(
        "--mode",
        default=",".join(MODE_NAMES),
        help=f"the modes to train in, comma-separated (default: {','.join(MODE_NAMES)})",
    )
    p.add_argument("--seed", type=int, default=0, help="seeds weights and batch order (default: 0)")
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke run: 1 epoch (unless --epochs) on {QUICK_TRAIN} training samples",
    )
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="also draw each mode's loss curve and time per epoch into this file "
        "(needs matplotlib: pip install 'ember[plot]')",
    )
    p.add_argument(
        "--graph",
        metavar="PNG",
        help="also draw one training step's lazy graph into this file, forward, backward "
        "and optimizer nodes coloured apart, fused groups boxed (needs matplotlib and "
        "networkx: pip install 'ember[plot]')",
    )
    return p
