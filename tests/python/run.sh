#!/usr/bin/env bash
# ctest `python`: the Python package's pytest suite against the package built
# in <build>/python, then the examples of examples/python/.
#   run.sh PYTHON BUILD_PYTHON_DIR [DEVSIM_PLUGIN]
# Exit 77 (skipped) when PYTHON lacks pytest or NumPy (tools/bootstrap.sh test
# installs them in build/venv; without network they are missing).
set -euo pipefail
py=$1
pkg=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
if ! "$py" -c 'import pytest, numpy' 2>/dev/null; then
  echo "SKIPPED: $py has no pytest or NumPy (tools/bootstrap.sh test installs them in build/venv)"
  exit 77
fi
export PYTHONPATH="$pkg:$here"
export BPT_DEVSIM_PATH=${3:-}
"$py" -m pytest -q -p no:cacheprovider "$here"
# The examples, as a user runs them (in a scratch directory: they write files).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for ex in "$root"/examples/python/*.py; do
  echo "== example $(basename "$ex")"
  (cd "$scratch" && "$py" "$ex")
done
# README's Python example, as printed there.
echo "== README.md's python example"
awk '/^```python$/{on=1; next} /^```$/{on=0} on' "$root/README.md" > "$scratch/readme_example.py"
[ -s "$scratch/readme_example.py" ] || { echo "README.md has no python example"; exit 1; }
(cd "$scratch" && "$py" readme_example.py)
