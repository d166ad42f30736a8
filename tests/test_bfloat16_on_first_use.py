"""bfloat16's ml_dtypes loads when first needed, not with ember (NOTE [bfloat16] in
ember/dtypes.py): ml_dtypes 0.7 alone takes about 0.6 s to import. Each case runs in a new
interpreter, so the load happens inside it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

try:
    import ml_dtypes  # noqa: F401 - only whether it is there
except ImportError:
    ml_dtypes = None

needs_ml_dtypes = pytest.mark.skipif(
    ml_dtypes is None, reason="ember.bfloat16 needs ml_dtypes (pip install 'ember[bf16]')"
)


def _run(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@needs_ml_dtypes
def test_import_ember_does_not_load_ml_dtypes() -> None:
    got = _run(
        "import sys, ember\n"
        "print('ml_dtypes' in sys.modules, type(ember.bfloat16).__name__)\n"
        "print(ember.bfloat16.itemsize, ember.bfloat16.is_floating_point)\n"
        "print(ember.promote_types(ember.bfloat16, ember.float16))\n"
        "print('ml_dtypes' in sys.modules)\n"
    )
    # the dtype answers what it knows without the package; promotion needs no ndarray dtype
    assert got == ["False", "_PendingDtype", "2", "True", "ember.float32", "False"]


@needs_ml_dtypes
def test_first_bfloat16_tensor_loads_it_and_fills_the_tables() -> None:
    got = _run(
        "import sys, ember\n"
        "x = ember.tensor([1.5, 2.25, 3.0]).to(ember.bfloat16)\n"
        "print('ml_dtypes' in sys.modules, type(ember.bfloat16).__name__, x.dtype)\n"
        "from ember import dtypes\n"
        "d = ember.bfloat16.np\n"
        "print(d in dtypes.HALF_NP, d in dtypes.FLOATING_NP, dtypes.FROM_NUMPY[d] is x.dtype)\n"
        "print(x.sum().item(), x.sum().dtype, (x * 2).tolist())\n"
    )
    assert got[:3] == ["True", "dtype", "ember.bfloat16"]
    assert got[3:6] == ["True", "True", "True"]
    assert got[6:] == ["6.75", "ember.bfloat16", "[3.0,", "4.5,", "6.0]"]


@needs_ml_dtypes
def test_a_users_ml_dtypes_array_before_ember_needed_it() -> None:
    got = _run(
        "import numpy as np, ml_dtypes, ember\n"
        "a = np.array([1.0, 2.0], dtype=ml_dtypes.bfloat16)\n"
        "t = ember.from_numpy(a)\n"
        "print(t.dtype, ember.as_tensor(a).dtype, t.float().tolist())\n"
    )
    assert got == ["ember.bfloat16", "ember.bfloat16", "[1.0,", "2.0]"]


@needs_ml_dtypes
def test_finfo_loads_it() -> None:
    got = _run("import ember\nprint(ember.finfo(ember.bfloat16).eps)\n")
    assert got == ["0.0078125"]


def test_without_ml_dtypes_bfloat16_names_the_extra() -> None:
    got = _run(
        "import sys\n"
        "sys.modules['ml_dtypes'] = None\n"  # as if it were not installed
        "import ember\n"
        "print(ember.dtypes.HAS_BFLOAT16 or hasattr(ember, 'bfloat16'))\n"
        "try:\n"
        "    ember.bfloat16\n"
        "except AttributeError as e:\n"
        "    print('bf16' in str(e))\n"
    )
    assert got == ["False", "True"]
