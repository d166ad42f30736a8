"""The device-side names CPU scripts touch: ``Stream``/``Event`` and ``cpu``'s streams,
``accelerator``, ``mps``, ``get_device_module``, and the ``SymInt`` family for isinstance
checks; each answering as PyTorch's CPU build does."""

from __future__ import annotations

import time

import pytest

import ember
from tests.conftest import requires_torch, torch


@requires_torch
@pytest.mark.parametrize("lib_name", ["ember", "torch"])
def test_streams_and_events_on_the_cpu(lib_name: str) -> None:
    lib = ember if lib_name == "ember" else torch
    s = lib.Stream(device="cpu")
    assert (s.device_type, s.device_index, s.stream_id) == (0, -1, 0)
    assert str(s.device) == "cpu" and repr(s).endswith(
        "device_type=cpu, device_index=-1, stream_id=0"
    )
    assert s.query() and lib.Event().query()  # (torch's cpu events cannot be recorded)
    assert lib.cpu.current_stream() is lib.cpu.current_stream()
    with lib.cpu.stream(lib.cpu.Stream()):
        assert float((lib.ones(2) * 2).sum()) == 4.0


def test_events_time_on_the_cpu() -> None:
    """torch's cpu events refuse to record ("cpu backend doesn't support events"); ember's
    record, and give the milliseconds between two records."""
    start, end = ember.Event(enable_timing=True), ember.Event(enable_timing=True)
    start.record()
    time.sleep(0.002)
    end.record()
    assert start.query() and end.query() and start.elapsed_time(end) >= 2.0


def test_cpu_only_refusals_and_timing() -> None:
    with pytest.raises(RuntimeError, match="cpu device only, got device 'cuda'"):
        ember.Stream(device="cuda")
    with pytest.raises(ValueError, match="enable_timing"):
        ember.Event().elapsed_time(ember.Event())
    a, b = ember.Event(enable_timing=True), ember.Event(enable_timing=True)
    with pytest.raises(ValueError, match="recorded first"):
        a.elapsed_time(b)


@requires_torch
def test_device_modules_answer_as_torch() -> None:
    for name in ("is_available", "device_count"):
        assert getattr(ember.accelerator, name)() == getattr(torch.accelerator, name)()
        assert getattr(ember.mps, name)() == getattr(torch.mps, name)()
    assert ember.accelerator.current_accelerator() is torch.accelerator.current_accelerator()
    assert ember.get_device_module() is ember.cpu
    assert ember.get_device_module("cpu") is ember.cpu
    assert ember.get_device_module(ember.device("cuda")) is ember.cuda
    with pytest.raises(RuntimeError, match="no device module"):
        ember.get_device_module("meta")


def test_sym_types_are_for_isinstance_only() -> None:
    size = ember.ones(3).shape[0]
    assert isinstance(size, (int, ember.SymInt)) and not isinstance(size, ember.SymInt)
    assert not isinstance(1.0, ember.SymFloat) and not isinstance(True, ember.SymBool)
    with pytest.raises(RuntimeError, match="no symbolic shapes yet"):
        ember.SymInt(None)


def test_small_module_aliases() -> None:
    h = ember.nn.Module().register_forward_hook(lambda m, i, o: None)
    assert isinstance(h, ember.utils.hooks.RemovableHandle)
    assert ember.compiler.allow_in_graph(len) is len
    lin = ember.nn.Linear(2, 1, bias=False)
    with pytest.warns(FutureWarning, match="ember.func.functional_call"):
        out = ember.nn.utils.stateless.functional_call(
            lin, {"weight": ember.ones(1, 2)}, (ember.ones(2),)
        )
    assert out.tolist() == [2.0]
