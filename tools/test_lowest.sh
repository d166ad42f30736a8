#!/usr/bin/env bash
# The README's test command at the lowest versions ember declares: a fresh virtual
# environment with numpy, numba and scipy (and pytest, hypothesis) pinned to the lower bounds
# in pyproject.toml, then the whole suite. CI runs the newest versions pip resolves; run this
# when a bound changes. Usage: bash tools/test_lowest.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
venv=$(mktemp -d "${TMPDIR:-/tmp}/ember-lowest.XXXXXX")
trap 'rm -rf "$venv"' EXIT
"$python" -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install --quiet "numpy==2.0.*" "numba==0.60.*" "scipy==1.15.*" \
    "pytest==8.0.*" "hypothesis==6.100.*" "ml_dtypes==0.5.*" ".[test]"
python -c 'import numpy, numba, scipy; print("numpy", numpy.__version__, "numba",
numba.__version__, "scipy", scipy.__version__)'
python -m pytest -p no:cacheprovider -rfE "$@"
