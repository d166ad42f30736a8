"""Reverse-mode automatic differentiation, as the Autograd dispatch key.

See NOTE [autograd as a dispatch key] in ``kernel.py``; the derivative table is
``derivatives.py``; the engine ``engine.py``.
"""

from __future__ import annotations

from ember.autograd import api as _api
from ember.autograd import derivatives as _derivatives  # noqa: F401  (fills the table)
from ember.autograd import derivatives_activation as _derivatives_activation  # noqa: F401
from ember.autograd import derivatives_fft as _derivatives_fft  # noqa: F401
from ember.autograd import derivatives_linalg as _derivatives_linalg  # noqa: F401
from ember.autograd import derivatives_loss as _derivatives_loss  # noqa: F401
from ember.autograd import derivatives_nn as _derivatives_nn  # noqa: F401
from ember.autograd import derivatives_rnn as _derivatives_rnn  # noqa: F401
from ember.autograd import derivatives_sparse as _derivatives_sparse  # noqa: F401
from ember.autograd import derivatives_spatial as _derivatives_spatial  # noqa: F401
from ember.autograd import derivatives_special as _derivatives_special  # noqa: F401
from ember.autograd import derivatives_tensorops as _derivatives_tensorops  # noqa: F401
from ember.autograd import forward_ad
from ember.autograd import inplace_views as _inplace_views
from ember.autograd import kernel as _kernel
from ember.autograd.anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from ember.autograd.api import backward, grad
from ember.autograd.function import Function, FunctionCtx
from ember.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ember.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from ember.autograd.graph import Node
from ember.autograd.variable import Variable

_kernel.install()
forward_ad._kernel.install()
_inplace_views.install()
_api.install()

# isort: split
# jacobian, hessian, vjp, jvp, hvp, vhp; record_function (which Optimizer uses)
from ember.autograd import functional, profiler  # noqa: E402

__all__ = [
    "Function", "FunctionCtx", "GradcheckError", "Node", "backward", "detect_anomaly",
    "enable_grad", "grad", "gradcheck", "gradgradcheck", "inference_mode", "is_anomaly_enabled",
    "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "set_grad_enabled",
    "forward_ad", "functional", "profiler", "is_anomaly_check_nan_enabled",
    "set_detect_anomaly", "Variable",
]  # fmt: skip
