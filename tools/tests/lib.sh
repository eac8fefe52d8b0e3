# Sourced by the shell tests of the benchmark tools: one PASS/FAIL line per
# check, a non-zero exit at `finish` when any failed. JQ names jq; a test that
# reads JSON calls need_jq first, which skips it without jq (exit 77, ctest's
# skip code), saying so; need_python3 likewise.
JQ=${JQ:-jq}
q35_fails=0

need_python3() {
    command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not found (tools/deps.sh installs it)"; exit 77; }
}

need_jq() {
    [ -n "$JQ" ] && command -v "$JQ" >/dev/null 2>&1 || { echo "SKIP  jq not found (tools/deps.sh installs it)"; exit 77; }
}

# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
    q35_desc=$1
    shift
    if "$@"; then echo "PASS  $q35_desc"; else echo "FAIL  $q35_desc"; q35_fails=$((q35_fails + 1)); fi
}

# jq_check FILE FILTER DESCRIPTION: passes when FILTER on FILE gives true;
# a failure prints what the filter gave.
jq_check() {
    q35_got=$("$JQ" "$2" "$1" 2>&1)
    if [ "$q35_got" = true ]; then
        echo "PASS  $3"
    else
        echo "FAIL  $3 ($2 on $1 gave: $(echo "$q35_got" | head -c 400))"
        q35_fails=$((q35_fails + 1))
    fi
}

# exit_is WANT OUTFILE COMMAND...: runs COMMAND, its stdout and stderr to
# OUTFILE; succeeds on exit code WANT, else shows the code and the output.
exit_is() {
    q35_want=$1 q35_out=$2
    shift 2
    "$@" >"$q35_out" 2>&1
    q35_got=$?
    [ "$q35_got" -eq "$q35_want" ] || { echo "      exit $q35_got, wanted $q35_want:"; sed 's/^/      | /' "$q35_out"; return 1; }
}

finish() {
    if [ "$q35_fails" -ne 0 ]; then
        echo "$q35_fails check(s) failed"
        exit 1
    fi
    echo "all checks passed"
}
