"""``ember.profiler``: where a program's time goes, op by op (PyTorch's ``torch.profiler``,
CPU activity only).

Inside ``profile``, every op that reaches the Python key is an event (a dispatch mode
records it: the ops below autograd, the same ones a ``TorchDispatchMode`` sees, named
``aten::add`` as PyTorch names them), and so is every ``record_function`` range;
``key_averages()`` groups the events by name and ``table()`` prints them. A profiled
program runs its ops through the Python key, so it runs slower than unprofiled; the times
are wall times of this process. ``schedule`` and ``step()`` choose which steps record, and
``on_trace_ready`` (``tensorboard_trace_handler``, or any callable) receives each recorded
cycle; ``export_chrome_trace`` writes the events in the Chrome trace format.

What PyTorch's profiler has and ember's does not (yet): device activities, memory
profiling, FLOP counts, stacks and modules of events, and the Kineto trace backend.

>>> x = ember.ones(3)
>>> with ember.profiler.profile() as prof:
...     with ember.profiler.record_function("step"):
...         y = (x * 2).sum()
>>> sorted(e.key for e in prof.key_averages())
['aten::mul', 'aten::sum', 'step']
"""

from __future__ import annotations

from ember.autograd.profiler import record_function
from ember.profiler._events import EventList, FunctionEvent, FunctionEventAvg
from ember.profiler._profile import (
    ProfilerAction,
    ProfilerActivity,
    kineto_available,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = [
    "EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction", "ProfilerActivity",
    "kineto_available", "profile", "record_function", "schedule", "supported_activities",
    "tensorboard_trace_handler",
]  # fmt: skip
