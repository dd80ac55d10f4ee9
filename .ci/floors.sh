#!/usr/bin/env bash
# The lowest versions pyproject.toml allows of each direct dependency, on a short
# offline subset of the tests: every pattern's graphs, checkpoints on SQLite,
# approvals, durability and middleware (no embedded model, no model server, no dev server).
set -euo pipefail
cd "$(dirname "$0")/.."
# checkpoints on SQLite only: no PostgreSQL driver at the floors
unset REASONING_GRAPHS_TEST_POSTGRES

venv=.venv-floors
rm -rf "$venv"
python3 -m venv "$venv"
. "$venv/bin/activate"
export PIP_DISABLE_PIP_VERSION_CHECK=1
python .ci/floor_constraints.py pyproject.toml test >"$venv/floors.txt"
pip install -q -c "$venv/floors.txt" . pytest pytest-asyncio pytest-timeout hypothesis
echo "-- installed at the floors:"
pip list --format=freeze | grep -i -F -f <(cut -d= -f1 "$venv/floors.txt" | sed 's/$/==/')

python -m pytest -q -p no:cacheprovider -m "not server and not local_model and not openai_server" \
  tests/test_message_merge.py \
  tests/test_patterns.py \
  tests/test_react.py \
  tests/test_plan_execute.py \
  tests/test_rewoo.py \
  tests/test_llm_compiler.py \
  tests/test_reflexion.py \
  tests/test_lats.py \
  tests/test_cot.py \
  tests/test_tot.py \
  tests/test_plan_react.py \
  tests/test_reflect_every.py \
  tests/test_structured_steps.py \
  tests/test_verify.py \
  tests/test_typed_answers.py \
  tests/test_checkpointers.py \
  tests/test_approvals.py \
  tests/test_durability_default.py \
  tests/test_durability.py \
  tests/test_builtin_tools.py \
  tests/test_middleware.py \
  tests/test_middleware_questions.py \
  tests/test_call_limits.py \
  tests/test_models.py
