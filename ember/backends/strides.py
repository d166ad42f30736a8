"""Moved to ``ember/ops/strides.py`` (the layout arithmetic the catalogue and every backend
share); this name stays for code written against the old path."""

import sys

from ember.ops import strides

sys.modules[__name__] = strides
