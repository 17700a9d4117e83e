#!/bin/bash
# bench/gpu/run.sh [BUILD_DIR]: build bp_gpu_bench in BUILD_DIR (default
# build; configured with the cuda plugin), time PyTorch's side when a Python
# with a CUDA-enabled torch is found ($TORCH_PYTHON, /opt/torch/.venv's,
# python3), and print the one table (docs/gpu.md). Run from the project root.
set -euo pipefail
build=${1:-build}
cmake --build "$build" --target bp_gpu_bench >&2
torch_times=$(mktemp)
trap 'rm -f "$torch_times"' EXIT
for py in "${TORCH_PYTHON:-}" /opt/torch/.venv/bin/python python3; do
    if [ -n "$py" ] && "$py" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
        echo "PyTorch: $("$py" -c 'import torch; print(torch.__version__)') ($py)" >&2
        "$py" "$(dirname "$0")/torch_bench.py" > "$torch_times"
        break
    fi
done
[ -s "$torch_times" ] || echo "PyTorch: not found; its rows say n/a" >&2
"$build/bin/bp_gpu_bench" --torch "$torch_times"
