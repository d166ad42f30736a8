"""``python -m benchmarks [--quick] [--filter TEXT]``: see ``benchmarks/run.py``."""

from __future__ import annotations

import sys

from benchmarks.run import main

sys.exit(main(sys.argv[1:]))
