#!/bin/sh
# The README's two commands as a new user meets them, to run before any change
# to tools/, CMake, the presets or the dependencies is submitted:
#   - the repository's HEAD cloned into a new temporary folder (what is not
#     committed is not checked: the script says so when the tree is dirty);
#   - HOME an empty folder and XDG_CACHE_HOME unset, so no earlier install under
#     ~/.cache (e.g. q35-tools) helps; the environment otherwise only PATH, and
#     nothing of this shell's Q35_* or CUDAARCHS settings;
#   - tools/main.sh, then tools/test.sh (= .ci/run), each timed, each log kept.
# Prints a verdict and the time of each, and exits 1 when either failed.
#   tools/fresh-check.sh [-k] [WORKDIR]
#   -k        keep the clone and the empty HOME (they are removed on success)
#   WORKDIR   where to make them (default: a new folder under ${TMPDIR:-/tmp})
set -u
keep=0
[ "${1:-}" = -k ] && { keep=1; shift; }
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/q35-fresh.XXXXXX")} || exit 1
mkdir -p "$work/home" || exit 1
[ -z "$(ls -A "$work/home")" ] || { echo "fresh-check: $work/home is not empty" >&2; exit 2; }
[ ! -e "$work/q35prefill" ] || { echo "fresh-check: $work/q35prefill already exists" >&2; exit 2; }
head=$(git -C "$repo" rev-parse --short HEAD) || exit 1
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
    echo "fresh-check: the working tree has uncommitted changes: they are NOT checked (HEAD $head is)"
git clone --quiet --no-local "$repo" "$work/q35prefill" || { echo "fresh-check: git clone failed" >&2; exit 1; }
echo "fresh-check: HEAD $head cloned into $work/q35prefill, HOME=$work/home (empty)"

# step NAME COMMAND: runs COMMAND in the clone with the fresh environment, its
# output to $work/NAME.log; prints the verdict and the seconds it took.
rc_all=0
step() {
    name=$1
    shift
    t0=$(date +%s)
    (cd "$work/q35prefill" && env -i HOME="$work/home" PATH="$PATH" LANG=C.UTF-8 TERM=dumb "$@") \
        >"$work/$name.log" 2>&1
    rc=$?
    t=$(($(date +%s) - t0))
    if [ $rc -eq 0 ]; then
        printf 'fresh-check: %-14s passed in %4d s\n' "$name" "$t"
    else
        printf 'fresh-check: %-14s FAILED (exit %d) in %4d s; the end of %s:\n' "$name" $rc "$t" "$work/$name.log"
        tail -25 "$work/$name.log" | sed 's/^/    /'
        rc_all=1
    fi
}
step main tools/main.sh
step test tools/test.sh
# what the tests reported skipped, and what the two commands installed
grep -hE '^deps: ' "$work/main.log" "$work/test.log" | sort -u | sed 's/^/fresh-check: /'
grep -E '^[0-9]+% tests passed|tests failed out of' "$work/test.log" | sed 's/^/fresh-check: ctest: /'
grep -E ' \*\*\*Skipped| Not Run' "$work/test.log" | sed 's/^ */fresh-check: skipped: /'
if [ $rc_all -eq 0 ]; then
    echo "fresh-check: PASS at $head"
    [ $keep -eq 1 ] || rm -rf "$work"
else
    echo "fresh-check: FAIL at $head (logs and clone in $work)"
fi
exit $rc_all
