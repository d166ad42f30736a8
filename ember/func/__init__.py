"""``ember.func``: PyTorch's ``torch.func`` function transforms.

Today: ``functional_call`` (a module run with other parameters) and ``functionalize`` (a
function whose writes and views are rewritten as pure ops). One file per transform.
"""

from ember.func._functional_call import functional_call
from ember.func._functionalize import functionalize
from ember.func._grad import grad, grad_and_value
from ember.func._hessian import hessian
from ember.func._jacfwd import jacfwd
from ember.func._jacrev import jacrev
from ember.func._jvp import jvp
from ember.func._linearize import linearize
from ember.func._stack_module_state import stack_module_state
from ember.func._vjp import vjp
from ember.func._vmap import vmap

__all__ = ["functional_call", "functionalize"]
__all__ += ["vmap", "grad", "grad_and_value", "vjp", "jacrev", "stack_module_state"]
__all__ += ["hessian", "jacfwd", "jvp", "linearize"]
