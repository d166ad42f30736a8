"""ember: PyTorch's extensibility architecture on NumPy.

>>> import ember
>>> ember.tensor([1.0, 2.0]) * 2
tensor([2., 4.])
"""

from __future__ import annotations

import sys as _sys

# NOTE [help before import]
# Python imports a package before it runs the package's __main__, so ``python -m ember
# --help`` would load the whole library (some 0.25 s) only to print the demo's options. The
# package answers instead, from the demo's parser, which imports nothing of ember: while
# ``-m`` imports the package, ``sys.argv[0]`` is "-m" and ``sys.orig_argv`` names the module.
if _sys.argv[:1] == ["-m"] and {"-h", "--help"} & set(_sys.argv[1:]):
    _m = [i for i, a in enumerate(_sys.orig_argv[:-1]) if a == "-m"]
    if _m and _sys.orig_argv[_m[0] + 1] == "ember":
        from ember.demo.options import parser as _parser

        _parser().parse_args(_sys.argv[1:])  # prints the help and exits, as argparse does

import gc as _gc
import importlib as _importlib

# NOTE [no collection during import]
# Importing ember creates some hundred thousand objects (ops, schemas, kernels, generated
# functions), none of them garbage; the cyclic collector, triggered every few hundred
# allocations, would walk them again and again, about a fifth of the import's time. It is
# paused for the import and restored (to the state the importer had) on the last line.
_gc_was_enabled = _gc.isenabled()
_gc.disable()

# Order matters: the catalogue defines ops, backends register kernels, then the public
# functions and Tensor methods are generated from what is registered.
from ember import dtypes as _dtypes
from ember.device import device
from ember.dispatch.keys import DispatchKey
from ember.dtypes import (
    bool_ as bool,  # noqa: A004 - ember.bool, as torch.bool
    can_cast,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ember.ops import native as _native  # noqa: F401  (declares the aten ops)
from ember.ops.registry import ops
from ember._tensor import Size, Tensor
from ember import backends as _backends  # noqa: F401
from ember.backends import cpu as _cpu  # noqa: F401  (registers CPU kernels)
from ember.backends import meta as _meta  # noqa: F401  (registers Meta rules)
from ember.backends import foreach as _foreach  # noqa: F401  (the foreach ops, every key)
from ember.backends import sparse as _sparse_kernels  # noqa: F401  (the SparseCPU key)
from ember._factory import as_tensor, from_numpy, tensor
from ember import overrides
from ember import functional as _functional
from ember.overrides import _subclass as _subclass  # noqa: F401  (as_subclass, Tensor.__torch_function__)
from ember import _python_key as _python_key  # noqa: F401  (the Python key: __torch_dispatch__)
from ember.functional import *  # noqa: F403
from ember import library
from ember import _indexing as _indexing  # noqa: F401  (Tensor.__getitem__/__setitem__)
from ember import _conversions as _conversions  # noqa: F401
from ember import _tensor_methods as _tensor_methods  # noqa: F401  (unique, new_tensor, ...)
from ember import _tensor_set as _tensor_set  # noqa: F401  (Tensor.set_, in its five forms)
from ember.random import *  # noqa: F403
from ember._tensor_str import set_printoptions
from ember._script_helpers import *  # noqa: F403  (_check, asarray, sym_int, typename...)
from ember import autograd
from ember.autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from ember.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

half, float, double = float16, float32, float64  # noqa: A001
if _dtypes.HAS_BFLOAT16:  # NOTE [bfloat16] in ember/dtypes.py
    bfloat16 = _dtypes.bfloat16


short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

__version__ = "0.1.0"

from ember import nn, optim, utils  # noqa: E402  (built on everything above)
from ember.utils import data as _utils_data  # noqa: E402, F401  (ember.utils.data)
from ember import _C  # noqa: E402
from ember import fx  # noqa: E402
from ember._torch_functional import _assert  # noqa: E402, F401  (torch._assert)
from ember._dispatch import python as _python_dispatch  # noqa: E402, F401  (OpOverload.py_impl)
from ember import lazy  # noqa: E402  (the lazy device: the Lazy key's fallback)
from ember import functionalize as _functionalize  # noqa: E402, F401  (the Functionalize key)
from ember._higher_order_ops.cond import cond  # noqa: E402
from ember._higher_order_ops.while_loop import while_loop  # noqa: E402
from ember import _custom_ops as _custom_ops  # noqa: E402, F401  (ember.library.custom_op)
from ember import linalg  # noqa: E402  (torch.linalg's functions)
from ember import cuda  # noqa: E402  (answers as PyTorch's CPU-only build)
from ember import amp  # noqa: E402  (torch.amp: autocast, the AutocastCPU key, GradScaler)
from ember import cpu  # noqa: E402  (torch.cpu, with the deprecated torch.cpu.amp)
from ember._streams import Event, Stream  # noqa: E402  (the cpu device's, as PyTorch's)
from ember._sym import SymBool, SymFloat, SymInt  # noqa: E402  (for isinstance checks)
from ember.amp.autocast_mode import (  # noqa: E402
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from ember._global_settings import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_float32_matmul_precision,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    set_float32_matmul_precision,
    set_num_threads,
    use_deterministic_algorithms,
)
from ember import fft  # noqa: E402  (torch.fft's functions)
from ember import special  # noqa: E402  (torch.special's functions, Tensor.polygamma)
from ember import hub  # noqa: E402  (torch.hub: hubconf entry points, checkpoints by URL)
from ember._layout import layout, sparse_coo, strided  # noqa: E402
from ember import sparse  # noqa: E402  (torch.sparse; the SparseCPU key: ember/backends/sparse/)
from ember.sparse import sparse_coo_tensor  # noqa: E402
from ember._type_info import finfo, iinfo  # noqa: E402
from ember.storage import TypedStorage, UntypedStorage  # noqa: E402
from ember import _memory as _memory  # noqa: E402, F401  (pin_memory, share_memory_, storage)

import math as _math  # noqa: E402

# the constants torch re-exports (torch.float is a dtype here too, so they come from math)
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan
newaxis = None
from ember._dlpack import from_dlpack  # noqa: E402  (also Tensor.__dlpack__)
from ember._memory_format import (  # noqa: E402
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)

overrides.guard_tensor_members()  # every member is attached by now (NOTE [torch function keys])
from ember._tensor import _LOCAL_SCALAR  # noqa: E402

_LOCAL_SCALAR[0] = ops.aten._local_scalar_dense.default  # item() of a wrapper subclass

# NOTE [loaded on first use]
# PyTorch's ``torch.func``, ``torch.vmap``, ``torch.compile``, ``torch.save`` and
# ``torch.distributed`` are attributes of the package; here the layers behind them load
# when first named (PEP 562), as ``import ember`` needs none of them: the transforms
# (``ember.func``, with vmap's batching rules, NOTE [batching rules]), ``ember.compile``
# (``ember.aot`` and ``ember/compiler``), ``ember.distributed``, ``ember.save``/``load``
# (zipfile), ``ember.distributions`` and ``ember.testing``. ``import ember.func`` and
# ``from ember import vmap`` work as before.
_LAZY = {
    "vmap": ("ember.func._vmap", "vmap"),
    "compile": ("ember._compile", "compile"),
    "_disable_dynamo": ("ember._compile", "_disable_dynamo"),
    "save": ("ember.serialization", "save"),
    "load": ("ember.serialization", "load"),
}
#: submodules that were attributes after ``import ember`` and now load when first named
_LAZY_MODULES = frozenset(
    "func distributed aot compiler serialization _compile _functorch _batched _checkpoint "
    "jit testing distributions version types _dynamo profiler accelerator mps signal export "
    "_ops".split()
)


def __getattr__(name: str) -> object:
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(_importlib.import_module(module), attr)
        globals()[name] = value
        return value
    if name in _LAZY_MODULES:
        return _importlib.import_module(f"ember.{name}")  # sets the attribute itself
    if name == "bfloat16":  # NOTE [bfloat16] in ember/dtypes.py: ml_dtypes is missing
        raise AttributeError(_dtypes.BFLOAT16_MISSING)
    raise AttributeError(f"module 'ember' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _LAZY_MODULES)


from ember.dispatch import codegen as _codegen  # noqa: E402

_codegen.save_cache()  # NOTE [generated bytecode cache]
if _gc_was_enabled:  # NOTE [no collection during import]: the last line of the import
    _gc.enable()
del _gc_was_enabled
