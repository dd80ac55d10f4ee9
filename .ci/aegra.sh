#!/usr/bin/env bash
# Aegra (the open engine for langgraph.json) for tests/test_aegra_smoke.py: a Python 3.12 venv
# at $PWD/.ci-aegra-venv with aegra-api and this project (editable), and redis-server from
# Debian when it is missing. Aegra needs Python >= 3.12 while the project's own venv may be
# older, so the engine gets a venv of its own. Prints one line, that venv's python, for
# REASONING_GRAPHS_TEST_AEGRA; everything else goes to stderr.
# A second run only checks a stamp (the pin and pyproject.toml's hash) and returns at once.
set -euo pipefail

AEGRA_PIN="aegra-api==0.11.0"
venv="$PWD/.ci-aegra-venv"
python="$venv/bin/python"

if ! command -v redis-server >/dev/null 2>&1; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2
fi

# the first Python 3.12 that runs: python3.12 on PATH (a pyenv shim there may refuse), pyenv's
find_python312() {
  local candidate
  for candidate in "$(command -v python3.12 || true)" \
    $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python 2>/dev/null | sort -rV); do
    if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' \
      >/dev/null 2>&1; then
      echo "$candidate"
      return
    fi
  done
}

stamp="$venv/.rg-stamp"
want="$AEGRA_PIN $(sha256sum pyproject.toml | cut -d' ' -f1) $PWD"
if [ -x "$python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$python"
  exit 0
fi

if [ ! -x "$python" ]; then
  base=$(find_python312)
  if [ -z "$base" ]; then
    echo "aegra.sh: Python 3.12 not found (python3.12 on PATH or pyenv's versions/3.12.*)" >&2
    exit 1
  fi
  "$base" -m venv "$venv" >&2
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1
"$python" -m pip install -q "$AEGRA_PIN" -e ".[server,postgres]" >&2
"$python" -c "import aegra_api, reasoning_graphs" >&2
echo "$want" >"$stamp"
echo "$python"
