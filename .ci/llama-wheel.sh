#!/usr/bin/env bash
# On a machine whose CPU reports AMX, llama.cpp's AMX kernels stop the embedded model with
# "Illegal instruction" (SIGILL in libggml-cpu, seen on these virtual machines), whether the
# wheel comes from pip's cache or is built here with the native flags. Build it once without
# them (and without the multimodal library, which nothing here loads) into a folder and print
# that folder, for PIP_FIND_LINKS: pip then installs this wheel for both README commands
# instead of building or reusing another. Elsewhere print nothing.
set -euo pipefail

grep -qw amx_tile /proc/cpuinfo || exit 0
out="$PWD/.ci-wheels"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
python -m venv .ci-wheel-venv >&2
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF" \
  .ci-wheel-venv/bin/pip wheel --no-deps --no-cache-dir -q "llama-cpp-python>=0.3.8" -w "$out" >&2
echo "$out"
