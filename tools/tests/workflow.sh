#!/bin/sh
# The lint of the CI workflows: actionlint (tools/lint-tools.txt; $ACTIONLINT,
# else on PATH, else tools/deps.sh's ~/.cache/q35-tools/actionlint) on
# .github/workflows/*.yml with .github/actionlint.yaml (shellcheck over the run:
# steps where it is on PATH), clean; then a copy with a mistake in each of two
# places (an unknown runner label, an unknown property in an expression) flagged,
# so the lint can fail. Skipped (77), saying why, without actionlint.
#   tools/tests/workflow.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
al=${ACTIONLINT:-$(command -v actionlint 2>/dev/null)}
[ -n "$al" ] || al=${XDG_CACHE_HOME:-$HOME/.cache}/q35-tools/actionlint/bin/actionlint
[ -x "$al" ] || { echo "SKIP  actionlint not installed (tools/deps.sh installs tools/lint-tools.txt where actionlint's releases can be reached)"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp"
echo "actionlint: $al ($("$al" -version 2>&1 | head -1))"

check "the workflows are clean" exit_is 0 "$tmp/clean.txt" sh -c "cd '$src' && '$al' -no-color .github/workflows/*.yml"
check "  there is a workflow with a cpu and a gpu job" sh -c "grep -q '^  cpu:' '$src/.github/workflows/ci.yml' && grep -q '^  gpu:' '$src/.github/workflows/ci.yml'"
[ -s "$tmp/clean.txt" ] && sed 's/^/      | /' "$tmp/clean.txt"
mkdir -p "$tmp/bad/.github/workflows"
cp "$src/.github/actionlint.yaml" "$tmp/bad/.github/"
sed 's/\[self-hosted, gpu\]/[self-hosted, gpu-typo]/; s/github\.run_id/github.run_idx/' "$src/.github/workflows/ci.yml" >"$tmp/bad/.github/workflows/ci.yml"
check "  the mistakes are in the copy" sh -c "grep -q gpu-typo '$tmp/bad/.github/workflows/ci.yml' && grep -q run_idx '$tmp/bad/.github/workflows/ci.yml'"
check "a workflow with two mistakes: flagged (exit 1)" exit_is 1 "$tmp/bad.txt" sh -c "cd '$tmp/bad' && '$al' -no-color .github/workflows/ci.yml"
check "  the unknown label" grep -q 'label "gpu-typo" is unknown' "$tmp/bad.txt"
check "  the unknown property" grep -q 'run_idx' "$tmp/bad.txt"
finish
