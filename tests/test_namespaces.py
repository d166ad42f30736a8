"""Namespaces everyday scripts touch: ``cuda`` (answering as PyTorch's CPU-only build),
``backends``' switches, and the process-wide settings (deterministic algorithms, threads,
matmul precision), each against PyTorch."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

pytestmark = requires_torch


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    """(exception type name, message), or ("ok", repr of the result with the library name
    taken out) for a call."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e)
    return "ok", repr(r).replace("torch", "X").replace("ember", "X")


# --------------------------------------------------------------------------- cuda devices

# each: what a script does with a CUDA device, as a function of the library
CUDA_USES: dict[str, Callable[[Any], Any]] = {
    "ones(device='cuda')": lambda X: X.ones(2, device="cuda"),
    "ones(device=device('cuda:1'))": lambda X: X.ones(2, device=X.device("cuda:1")),
    "zeros(device='cuda:0')": lambda X: X.zeros(2, 3, device="cuda:0"),
    "empty(device='cuda')": lambda X: X.empty(2, device="cuda"),
    "full(device='cuda')": lambda X: X.full((2,), 1.0, device="cuda"),
    "arange(device='cuda')": lambda X: X.arange(3, device="cuda"),
    "linspace(device='cuda')": lambda X: X.linspace(0, 1, 3, device="cuda"),
    "eye(device='cuda')": lambda X: X.eye(2, device="cuda"),
    "randn(device='cuda')": lambda X: X.randn(2, device="cuda"),
    "rand(device='cuda')": lambda X: X.rand(2, device="cuda"),
    "randint(device='cuda')": lambda X: X.randint(3, (2,), device="cuda"),
    "tensor(device='cuda')": lambda X: X.tensor([1.0], device="cuda"),
    "as_tensor(device='cuda')": lambda X: X.as_tensor([1.0], device="cuda"),
    "zeros_like(device='cuda')": lambda X: X.zeros_like(X.ones(2), device="cuda"),
    "full_like(device='cuda')": lambda X: X.full_like(X.ones(2), 2, device="cuda"),
    "new_ones(device='cuda')": lambda X: X.ones(2).new_ones(2, device="cuda"),
    "to('cuda')": lambda X: X.ones(2).to("cuda"),
    "to('cuda:0')": lambda X: X.ones(2).to("cuda:0"),
    "to(device('cuda'))": lambda X: X.ones(2).to(X.device("cuda")),
    "to(device='cuda')": lambda X: X.zeros(2).to(device="cuda"),
    "to('cuda', float64)": lambda X: X.ones(2).to("cuda", X.float64),
    "requires_grad to('cuda')": lambda X: X.ones(2, requires_grad=True).to("cuda"),
    "meta to('cuda')": lambda X: X.ones(2, device="meta").to("cuda"),
    "cuda()": lambda X: X.ones(2).cuda(),
    "cuda('cuda:0')": lambda X: X.ones(2).cuda("cuda:0"),
    "cuda(non_blocking=True)": lambda X: X.ones(2).cuda(non_blocking=True),
    "cuda('cpu')": lambda X: X.ones(2).cuda("cpu"),
    "Module.to('cuda')": lambda X: X.nn.Linear(2, 2).to("cuda"),
    "Module.cuda()": lambda X: X.nn.Linear(2, 2).cuda(),
    "parameterless Module.to('cuda')": lambda X: X.nn.ReLU().to("cuda"),
    "parameterless Module.cuda()": lambda X: X.nn.ReLU().cuda(),
    # a bare int is the current accelerator, which a CPU-only build does not have
    "device(0)": lambda X: X.device(0),
    "ones(device=0)": lambda X: X.ones(2, device=0),
    "to(0)": lambda X: X.ones(2).to(0),
    "cuda(0)": lambda X: X.ones(2).cuda(0),
    "Module.cuda(0)": lambda X: X.nn.Linear(2, 2).cuda(0),
    # what still works
    "device('cuda')": lambda X: X.device("cuda"),
    "device('cuda', 0)": lambda X: X.device("cuda", 0),
    "device('cuda:1').index": lambda X: X.device("cuda:1").index,
    "str(device('cuda:1'))": lambda X: str(X.device("cuda:1")),
    "is_cuda": lambda X: X.ones(2).is_cuda,
    "cpu tensor's device == cuda": lambda X: X.ones(2).device == X.device("cuda"),
    "device pick": lambda X: X.device("cuda" if X.cuda.is_available() else "cpu"),
}


@pytest.mark.parametrize("use", CUDA_USES, ids=list(CUDA_USES))
def test_cuda_device_uses_match_pytorch(use: str) -> None:
    fn = CUDA_USES[use]
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


def test_cuda_error_is_never_a_key_error() -> None:
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
        ember.ones(2, device="cuda")
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        ember.ones(2, device="cuda:3")


def test_unknown_device_string_raises_runtime_error() -> None:
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="device type at start of device string: xyz"):
            lib.ones(2, device="xyz")


def test_cuda_guarded_script_runs_on_cpu() -> None:
    """The usual pattern: pick the device by ``is_available``, then move model and data."""
    device = ember.device("cuda" if ember.cuda.is_available() else "cpu")
    model = ember.nn.Linear(3, 1).to(device)
    x = ember.randn(4, 3, device=device)
    ember.cuda.manual_seed_all(0)
    assert model(x).device == ember.device("cpu")


# --------------------------------------------------------------------------- ember.cuda

CUDA_CALLS: dict[str, Callable[[Any], Any]] = {
    "is_available": lambda X: X.cuda.is_available(),
    "device_count": lambda X: X.cuda.device_count(),
    "is_initialized": lambda X: X.cuda.is_initialized(),
    "manual_seed": lambda X: X.cuda.manual_seed(0),
    "manual_seed_all": lambda X: X.cuda.manual_seed_all(0),
    "seed": lambda X: X.cuda.seed(),
    "seed_all": lambda X: X.cuda.seed_all(),
    "set_rng_state": lambda X: X.cuda.set_rng_state(X.zeros(1, dtype=X.uint8)),
    "get_rng_state_all": lambda X: X.cuda.get_rng_state_all(),
    "empty_cache": lambda X: X.cuda.empty_cache(),
    "memory_allocated": lambda X: X.cuda.memory_allocated(),
    "max_memory_allocated": lambda X: X.cuda.max_memory_allocated(),
    "memory_reserved": lambda X: X.cuda.memory_reserved(),
    "max_memory_reserved": lambda X: X.cuda.max_memory_reserved(),
    "is_bf16_supported": lambda X: X.cuda.is_bf16_supported(),
    "init": lambda X: X.cuda.init(),
    "synchronize": lambda X: X.cuda.synchronize(),
    "current_device": lambda X: X.cuda.current_device(),
    "current_stream": lambda X: X.cuda.current_stream(),
    "get_device_name": lambda X: X.cuda.get_device_name(),
    "get_device_name(0)": lambda X: X.cuda.get_device_name(0),
    "get_device_properties": lambda X: X.cuda.get_device_properties(0),
    "get_device_capability": lambda X: X.cuda.get_device_capability(),
    "get_rng_state": lambda X: X.cuda.get_rng_state(),
    "initial_seed": lambda X: X.cuda.initial_seed(),
}


@pytest.mark.parametrize("call", CUDA_CALLS, ids=list(CUDA_CALLS))
def test_cuda_namespace_matches_pytorch(call: str) -> None:
    fn = CUDA_CALLS[call]
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


def test_cuda_manual_seed_leaves_cpu_stream_alone() -> None:
    ember.manual_seed(3)
    a = ember.rand(4)
    ember.manual_seed(3)
    ember.cuda.manual_seed(99)
    ember.cuda.manual_seed_all(99)
    np.testing.assert_array_equal(a.numpy(), ember.rand(4).numpy())


# --------------------------------------------------------------------------- backends

BACKEND_READS: dict[str, Callable[[Any], Any]] = {
    "cudnn.is_available": lambda X: X.backends.cudnn.is_available(),
    "cudnn.enabled": lambda X: X.backends.cudnn.enabled,
    "cudnn.benchmark": lambda X: X.backends.cudnn.benchmark,
    "cudnn.deterministic": lambda X: X.backends.cudnn.deterministic,
    "cudnn.allow_tf32": lambda X: X.backends.cudnn.allow_tf32,
    "cudnn.version": lambda X: X.backends.cudnn.version(),
    "mps.is_available": lambda X: X.backends.mps.is_available(),
    "mps.is_built": lambda X: X.backends.mps.is_built(),
    "cuda.is_built": lambda X: X.backends.cuda.is_built(),
    "cuda.matmul.allow_tf32": lambda X: X.backends.cuda.matmul.allow_tf32,
    "cuda.matmul.fp16 reduction": lambda X: (
        X.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
    ),
    "cuda.matmul.unknown": lambda X: X.backends.cuda.matmul.nonsense,
    "cuda.flash_sdp_enabled": lambda X: X.backends.cuda.flash_sdp_enabled(),
    "cuda.mem_efficient_sdp_enabled": lambda X: X.backends.cuda.mem_efficient_sdp_enabled(),
    "cuda.math_sdp_enabled": lambda X: X.backends.cuda.math_sdp_enabled(),
    "opt_einsum.is_available": lambda X: X.backends.opt_einsum.is_available(),
    "opt_einsum.enabled": lambda X: X.backends.opt_einsum.enabled,
    "opt_einsum.strategy": lambda X: X.backends.opt_einsum.strategy,
    "opt_einsum.get_opt_einsum": lambda X: X.backends.opt_einsum.get_opt_einsum(),
}


@pytest.mark.parametrize("read", BACKEND_READS, ids=list(BACKEND_READS))
def test_backend_flags_match_pytorch(read: str) -> None:
    fn = BACKEND_READS[read]
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


@pytest.mark.parametrize("name", ["cuda", "cudnn", "mps", "opt_einsum"])
def test_backend_switch_modules_import_at_pytorchs_path(name: str) -> None:
    """``import ember.backends.<name>`` gives the one module whose switches the attribute
    path reads and sets (NOTE [torch.backends switches]), as ``torch.backends.<name>``."""
    module = importlib.import_module(f"ember.backends.{name}")
    assert module is getattr(ember.backends, name)
    assert importlib.import_module(f"torch.backends.{name}") is getattr(torch.backends, name)


@pytest.fixture
def restore_flags() -> Iterator[None]:
    saved = [
        (lib, (lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic))
        for lib in (ember, torch)
    ]
    precision = {lib: lib.get_float32_matmul_precision() for lib in (ember, torch)}
    yield
    for lib, (bench, det) in saved:
        lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic = bench, det
        lib.set_float32_matmul_precision(precision[lib])
        lib.backends.cuda.enable_flash_sdp(True)


def test_backend_flags_can_be_set(restore_flags: None) -> None:
    for lib in (ember, torch):
        lib.backends.cudnn.benchmark = True
        lib.backends.cudnn.deterministic = True
        lib.backends.cuda.enable_flash_sdp(False)
    for lib in (ember, torch):
        assert lib.backends.cudnn.benchmark is True and lib.backends.cudnn.deterministic is True
        assert lib.backends.cuda.flash_sdp_enabled() is False


def test_cudnn_flags_block_restores(restore_flags: None) -> None:
    for lib in (ember, torch):
        with lib.backends.cudnn.flags(enabled=False, benchmark=True, deterministic=True):
            inside = (
                lib.backends.cudnn.enabled,
                lib.backends.cudnn.benchmark,
                lib.backends.cudnn.deterministic,
            )
        assert inside == (False, True, True)
        assert lib.backends.cudnn.enabled is True and lib.backends.cudnn.benchmark is False


def test_matmul_tf32_follows_precision(restore_flags: None) -> None:
    for lib in (ember, torch):
        lib.set_float32_matmul_precision("high")
        assert lib.backends.cuda.matmul.allow_tf32 is True
        assert lib.get_float32_matmul_precision() == "high"
        lib.set_float32_matmul_precision("highest")
        assert lib.backends.cuda.matmul.allow_tf32 is False


def test_matmul_precision_unknown_name_warns_and_keeps(restore_flags: None) -> None:
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("bad")
        assert lib.get_float32_matmul_precision() == "highest"


def test_matmul_flag_errors_match_pytorch() -> None:
    def set_tf32(X: Any) -> None:
        X.backends.cuda.matmul.allow_tf32 = 1

    def set_unknown(X: Any) -> None:
        X.backends.cuda.matmul.nonsense = True

    for fn in (set_tf32, set_unknown):
        assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))  # noqa: B023


# --------------------------------------------------------------------------- settings


@pytest.fixture
def deterministic_off() -> Iterator[None]:
    yield
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(False)


def test_deterministic_switch_matches_pytorch(deterministic_off: None) -> None:
    for mode, warn_only in ((True, False), (True, True), (False, True), (False, False)):
        got = []
        for lib in (ember, torch):
            lib.use_deterministic_algorithms(mode, warn_only=warn_only)
            got.append(
                (
                    lib.are_deterministic_algorithms_enabled(),
                    lib.is_deterministic_algorithms_warn_only_enabled(),
                    lib.backends.cudnn.deterministic,
                )
            )
        assert got[0] == got[1]


@pytest.mark.parametrize("args", [(1,), ("x",), (True, 1)])
def test_deterministic_switch_type_errors_match_pytorch(
    args: tuple[Any, ...], deterministic_off: None
) -> None:
    def call(X: Any) -> Any:
        mode, *rest = args
        return X.use_deterministic_algorithms(mode, **({"warn_only": rest[0]} if rest else {}))

    assert _outcome(lambda: call(ember)) == _outcome(lambda: call(torch))


EMPTIES: dict[str, Callable[[Any], Any]] = {
    "empty": lambda X: X.empty(3),
    "empty int64": lambda X: X.empty(3, dtype=X.int64),
    "empty int8": lambda X: X.empty(2, dtype=X.int8),
    "empty uint8": lambda X: X.empty(2, dtype=X.uint8),
    "empty bool": lambda X: X.empty(2, dtype=X.bool),
    "empty complex64": lambda X: X.empty(2, dtype=X.complex64),
    "empty float64 2-D": lambda X: X.empty(2, 3, dtype=X.float64),
    "empty_like": lambda X: X.empty_like(X.ones(2, 2)),
    "new_empty": lambda X: X.ones(2).new_empty(3),
    "empty_strided": lambda X: X.empty_strided((2, 2), (1, 2)),
}


@pytest.mark.parametrize("make", EMPTIES, ids=list(EMPTIES))
def test_deterministic_mode_fills_uninitialized_memory(make: str, deterministic_off: None) -> None:
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(True)
    e, t = EMPTIES[make](ember), EMPTIES[make](torch)
    assert e.dtype.itemsize == t.dtype.itemsize and tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride()
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_num_threads_set_and_get_match_pytorch() -> None:
    before = ember.get_num_threads(), torch.get_num_threads()
    try:
        for lib in (ember, torch):
            lib.set_num_threads(1)
        assert ember.get_num_threads() == torch.get_num_threads() == 1
        # work still runs, and gives the same values, on one thread
        a = np.random.default_rng(0).standard_normal((64, 64))
        np.testing.assert_allclose(
            (ember.from_numpy(a) @ ember.from_numpy(a)).numpy(),
            (torch.from_numpy(a) @ torch.from_numpy(a)).numpy(),
            rtol=1e-12,
        )
    finally:
        ember.set_num_threads(before[0])
        torch.set_num_threads(before[1])
    assert ember.get_num_threads() == before[0]


@pytest.mark.parametrize("n", [0, -1, 1.5, "2"])
def test_num_threads_errors_match_pytorch(n: Any) -> None:
    assert _outcome(lambda: ember.set_num_threads(n)) == _outcome(lambda: torch.set_num_threads(n))


def test_settings_are_ignored_by_torch_function() -> None:
    ignored = ember.overrides.get_ignored_functions()
    for name in (
        "use_deterministic_algorithms",
        "are_deterministic_algorithms_enabled",
        "set_num_threads",
        "get_num_threads",
        "set_float32_matmul_precision",
        "get_float32_matmul_precision",
    ):
        assert getattr(ember, name) in ignored
        assert getattr(torch, name) in torch.overrides.get_ignored_functions()


def test_namespaces_guide_examples_run() -> None:
    """The ``>>>`` examples of docs/namespaces.md print what they say."""
    import doctest
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "docs" / "namespaces.md"
    test = doctest.DocTestParser().get_doctest(
        doc.read_text(encoding="utf-8"), {"ember": ember}, doc.name, str(doc), 0
    )
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    try:
        result = runner.run(test)
    finally:
        ember.backends.cudnn.benchmark = False
        ember.use_deterministic_algorithms(False)
    assert result.attempted > 10 and result.failed == 0


def test_cuda_device_objects_save_and_load() -> None:
    """A device object is data: ``cuda`` ones round-trip through save/load (as in PyTorch);
    only tensors cannot live there."""
    import io

    buf = io.BytesIO()
    ember.save({"device": ember.device("cuda", 1)}, buf)
    buf.seek(0)
    assert ember.load(buf)["device"] == ember.device("cuda:1")
