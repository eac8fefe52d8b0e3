#!/bin/sh
# The lints of the CI workflows (.github/workflows/*.yml), each where it is
# installed (tools/deps.sh), each shown able to fail on a copy with mistakes:
#   - actionlint (tools/lint-tools.txt; $ACTIONLINT, else on PATH, else
#     ~/.cache/q35-tools/actionlint), with .github/actionlint.yaml (shellcheck
#     over the run: steps where it is on PATH): clean; a copy with an unknown
#     runner label and an unknown property in an expression flagged;
#   - the GitHub workflow schema (check-jsonschema's vendored copy,
#     tools/workflow-schema.txt in ~/.cache/q35-tools/workflow-schema): clean; a
#     copy with a job's runs-on misspelled and a timeout that is not a number
#     flagged.
# Skipped (77), saying why, when neither is installed.
#   tools/tests/workflow.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/q35-tools
al=${ACTIONLINT:-$(command -v actionlint 2>/dev/null)}
[ -n "$al" ] || al=$cache/actionlint/bin/actionlint
[ -x "$al" ] || al=""
js=$cache/workflow-schema
[ -e "$js/check_jsonschema/__main__.py" ] || js=""
[ -n "$al$js" ] || { echo "SKIP  neither actionlint nor check-jsonschema installed (tools/deps.sh installs tools/lint-tools.txt and tools/workflow-schema.txt)"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp/bad/.github/workflows"
check "there is a workflow with a cpu and a gpu job" sh -c "grep -q '^  cpu:' '$src/.github/workflows/ci.yml' && grep -q '^  gpu:' '$src/.github/workflows/ci.yml'"

if [ -n "$al" ]; then
    echo "actionlint: $al ($("$al" -version 2>&1 | head -1))"
    check "actionlint: the workflows are clean" exit_is 0 "$tmp/clean.txt" sh -c "cd '$src' && '$al' -no-color .github/workflows/*.yml"
    [ -s "$tmp/clean.txt" ] && sed 's/^/      | /' "$tmp/clean.txt"
    cp "$src/.github/actionlint.yaml" "$tmp/bad/.github/"
    sed 's/\[self-hosted, gpu\]/[self-hosted, gpu-typo]/; s/github\.run_id/github.run_idx/' "$src/.github/workflows/ci.yml" >"$tmp/bad/.github/workflows/ci.yml"
    check "  the mistakes are in the copy" sh -c "grep -q gpu-typo '$tmp/bad/.github/workflows/ci.yml' && grep -q run_idx '$tmp/bad/.github/workflows/ci.yml'"
    check "actionlint: a workflow with two mistakes is flagged (exit 1)" exit_is 1 "$tmp/bad.txt" sh -c "cd '$tmp/bad' && '$al' -no-color .github/workflows/ci.yml"
    check "  the unknown label" grep -q 'label "gpu-typo" is unknown' "$tmp/bad.txt"
    check "  the unknown property" grep -q 'run_idx' "$tmp/bad.txt"
else
    echo "SKIP  actionlint not installed (its build fetches the binary from actionlint's releases, beyond PyPI)"
fi

if [ -n "$js" ]; then
    schema() { PYTHONPATH="$js" python3 -m check_jsonschema --builtin-schema vendor.github-workflows "$@"; }
    echo "check-jsonschema: $js ($(PYTHONPATH="$js" python3 -m check_jsonschema --version 2>&1 | head -1))"
    check "schema: the workflows are clean" exit_is 0 "$tmp/schema-clean.txt" schema "$src"/.github/workflows/*.yml
    sed 's/^    runs-on: \[self-hosted, gpu\]/    run-on: [self-hosted, gpu]/; s/^    timeout-minutes: 120/    timeout-minutes: two hours/' \
        "$src/.github/workflows/ci.yml" >"$tmp/bad/schema.yml"
    check "  the mistakes are in the copy" sh -c "grep -q '^    run-on:' '$tmp/bad/schema.yml' && grep -q 'two hours' '$tmp/bad/schema.yml'"
    check "schema: a workflow with two mistakes is flagged (exit 1)" exit_is 1 "$tmp/schema-bad.txt" schema --verbose "$tmp/bad/schema.yml"
    check "  the missing runs-on" grep -q "'runs-on' is a required property" "$tmp/schema-bad.txt"
    check "  the timeout that is not a number" grep -q "'two hours' is not of type 'number'" "$tmp/schema-bad.txt"
else
    echo "SKIP  check-jsonschema not installed (tools/deps.sh installs tools/workflow-schema.txt from PyPI)"
fi
finish
