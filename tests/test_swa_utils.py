"""``ember.optim.swa_utils`` against ``torch.optim.swa_utils``: the running mean, EMA (per
tensor and foreach, with and without buffers), ``SWALR``'s schedule and ``update_bn``
after a few real SGD steps of a model with batch norm, and the argument errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember.optim.swa_utils import SWALR, AveragedModel, get_ema_avg_fn, get_ema_multi_avg_fn

from .conftest import requires_torch, torch


def _train(lib: Any, strategy: str) -> list[np.ndarray]:
    lib.manual_seed(0)
    nn, su = lib.nn, lib.optim.swa_utils
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    averaged = [
        su.AveragedModel(model),
        su.AveragedModel(model, use_buffers=True),
        su.AveragedModel(model, multi_avg_fn=su.get_ema_multi_avg_fn(0.9), use_buffers=True),
        su.AveragedModel(model, avg_fn=su.get_ema_avg_fn(0.8)),
        su.AveragedModel(model, avg_fn=su.get_swa_avg_fn()),
        su.AveragedModel(model, multi_avg_fn=su.get_swa_multi_avg_fn()),
    ]
    opt = lib.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    sched = su.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy=strategy)
    x = lib.from_numpy(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3).copy())
    lrs = []
    for step in range(6):
        opt.zero_grad()
        model(x[step % 3 :]).pow(2).mean().backward()
        opt.step()
        for m in averaged:
            m.update_parameters(model)
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    su.update_bn([(x[:4], 0), (x[4:], 1)], averaged[0])
    out = [np.array(lrs)]
    for m in averaged:
        out += [t.detach().numpy().copy() for t in [*m.parameters(), *m.buffers()]]
    return out


@requires_torch
@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_averages_schedule_and_bn_statistics_match_torch(strategy: str) -> None:
    got, want = _train(ember, strategy), _train(torch, strategy)
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"tensor {i}")


def test_the_average_is_a_running_mean_and_forward_runs_the_copy() -> None:
    m = ember.nn.Linear(1, 1, bias=False)
    swa = AveragedModel(m)
    with ember.no_grad():
        for v in (1.0, 2.0, 6.0):
            m.weight.fill_(v)
            swa.update_parameters(m)
    assert float(swa.module.weight) == 3.0 and int(swa.n_averaged) == 3
    assert float(swa(ember.ones(1, 1))) == 3.0
    assert swa.module.weight is not m.weight


def test_update_bn_restores_momentum_and_mode() -> None:
    model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3, momentum=0.3))
    model.eval()
    data = [ember.ones(4, 2), ember.zeros(4, 2)]
    ember.optim.swa_utils.update_bn(data, model)
    bn = model[1]
    assert bn.momentum == 0.3 and not model.training
    assert int(bn.num_batches_tracked) == 2
    lin = model[0](ember.cat(data)).detach()
    np.testing.assert_allclose(bn.running_mean.numpy(), lin.mean(0).numpy(), rtol=1e-5, atol=1e-6)


def test_argument_errors() -> None:
    m = ember.nn.Linear(1, 1)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        AveragedModel(m, avg_fn=get_ema_avg_fn(), multi_avg_fn=get_ema_multi_avg_fn())
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy"):
        SWALR(opt, 0.01, anneal_strategy="step")
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        SWALR(opt, [0.01, 0.02])
    with pytest.raises(ValueError, match="anneal_epochs"):
        SWALR(opt, 0.01, anneal_epochs=-1)
