#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# gpu suite: the Python package on the cuda backend (tests/api,
# CUDAIPC_TEST_GPU=1): torch.from_dlpack and cupy.from_dlpack of frames,
# data pointers equal to the slots', checksums against the producer, a
# torch producer read by cuipcsrc. Uses $CUDAIPC_GPU_PYTHON, else
# /opt/torch/.venv/bin/python3, else python3; exits 77 (skip) without a GPU
# or without torch there.
set -euo pipefail

"$CUDAIPC_IPC_NODE" probe >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
py=${CUDAIPC_GPU_PYTHON:-}
[ -n "$py" ] || { [ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3; } || true
[ -n "$py" ] || py=python3
"$py" -c "import torch, cupy" 2>/dev/null ||
  { echo "SKIP: $py has no torch and cupy"; exit 77; }
export CUDAIPC_TEST_GPU=1
exec "$py" "$1"
