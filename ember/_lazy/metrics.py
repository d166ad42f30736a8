"""``torch._lazy.metrics`` over ``ember.lazy.metrics``: counters and metrics of the lazy
device.

>>> import ember._lazy
>>> ember._lazy.metrics.reset()
>>> (ember.ones(2, device="lazy") + 1).tolist()
[2.0, 2.0]
>>> "ops_recorded" in ember._lazy.metrics.counter_names()
True
"""

from __future__ import annotations

from ember.compiler.metrics import counter_names, counter_value, metric_data, metric_names, reset
from ember.compiler.metrics import report as metrics_report

__all__ = [
    "reset",
    "counter_names",
    "counter_value",
    "metric_names",
    "metric_data",
    "metrics_report",
]
