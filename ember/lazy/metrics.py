"""``ember.lazy.metrics`` is ``ember/compiler/metrics.py`` (the counters live below both the
lazy device and the compiler that count into them); this module is that one."""

import sys

from ember.compiler import metrics

sys.modules[__name__] = metrics
