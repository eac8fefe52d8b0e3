#!/bin/sh
# Python wheels too large for one device call (a lent GPU machine takes the
# working tree and its carried paths up to 64 MiB a call, and has no package
# registry), carried in parts over several calls of one warm machine, then
# joined and installed there. FlashQLA's set (bench/README.md, Peers) is ~79 MB.
#
#   here:  tools/gpu-wheels.sh split DIR      the wheels in DIR as one tar, cut
#                                             into .whlparts/part.NN of at most
#                                             $Q35_PART_MB (default 20) MB, and
#                                             .whlparts/manifest (parts, bytes,
#                                             sha256); prints each call's carry
#   there: tools/gpu-wheels.sh put            the carried .whlparts/ files into
#                                             $Q35_WHEEL_PARTS_DIR (default
#                                             /tmp/q35-wheel-parts), which a warm
#                                             machine keeps between calls; says
#                                             which parts it holds
#   there: tools/gpu-wheels.sh join DIR       when every part of the manifest is
#                                             held and the tar's sha256 matches:
#                                             the wheels into DIR; else exit 1,
#                                             naming the parts missing
#   there: tools/gpu-wheels.sh install SITE   join, then pip install the wheels
#                                             (and .whl/*.whl, if any) into SITE
#                                             (default /tmp/q35-peers-site, where
#                                             tools/gpu-run.sh's peers stage
#                                             installs); then export PYTHONPATH=SITE
#
# Carry .whlparts/manifest with every call, one part per call beside the tree
# (add /.whlparts/ to .git/info/exclude so git leaves them out of the tree).
set -u
cd "$(dirname "$0")/.." || exit 2
parts=${Q35_WHEEL_PARTS:-.whlparts} # here, and what arrives there (relative to the repository's root)
held=${Q35_WHEEL_PARTS_DIR:-/tmp/q35-wheel-parts}
die() { echo "gpu-wheels: $*" >&2; exit "${2:-2}"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

case ${1:-} in
split)
    [ $# -eq 2 ] && [ -d "$2" ] || die "split wants the folder of wheels (tools/gpu-wheels.sh split DIR)"
    ls "$2"/*.whl >/dev/null 2>&1 || die "no .whl files in $2"
    mb=${Q35_PART_MB:-20}
    case $mb in '' | *[!0-9]*) die "Q35_PART_MB=$mb: want a whole number of MB" ;; esac
    [ "$mb" -ge 1 ] || die "Q35_PART_MB=$mb: want at least 1"
    rm -rf "$parts" && mkdir -p "$parts" || exit 1
    tar -cf "$parts/wheels.tar" -C "$2" $(cd "$2" && ls *.whl) || die "tar failed" 1
    split -b "${mb}M" -d -a 2 "$parts/wheels.tar" "$parts/part." || die "split failed" 1
    n=$(ls "$parts"/part.* | wc -l)
    printf 'parts %s\nbytes %s\nsha256 %s\n' "$n" "$(wc -c <"$parts/wheels.tar" | tr -d ' ')" \
        "$(sha "$parts/wheels.tar")" >"$parts/manifest"
    rm "$parts/wheels.tar"
    echo "gpu-wheels: $(cd "$2" && ls *.whl | wc -l) wheels in $n parts of at most $mb MB:"
    for p in "$parts"/part.*; do echo "  carry [\"$p\", \"$parts/manifest\"], then tools/gpu-wheels.sh put"; done
    ;;
put)
    [ -f "$parts/manifest" ] || die "no $parts/manifest here: carry it with each part"
    mkdir -p "$held" || exit 1
    cp "$parts/manifest" "$held/manifest" || exit 1
    for p in "$parts"/part.*; do [ -f "$p" ] && cp "$p" "$held/" || true; done
    echo "gpu-wheels: $held holds $(ls "$held"/part.* 2>/dev/null | wc -l) of $(sed -n 's/^parts //p' "$held/manifest") parts"
    ;;
join | install)
    [ "$1" = join ] && { [ $# -eq 2 ] || die "join wants the folder for the wheels"; }
    out=${2:-}
    [ -f "$held/manifest" ] || die "nothing put yet ($held/manifest missing)" 1
    n=$(sed -n 's/^parts //p' "$held/manifest")
    missing=
    i=0
    while [ "$i" -lt "$n" ]; do
        f=$(printf '%s/part.%02d' "$held" "$i")
        [ -f "$f" ] || missing="$missing $(basename "$f")"
        i=$((i + 1))
    done
    [ -z "$missing" ] || die "parts missing:$missing (put them first)" 1
    wheels=$held/wheels
    rm -rf "$wheels" && mkdir -p "$wheels" || exit 1
    cat "$held"/part.* >"$held/wheels.tar" || exit 1
    [ "$(sha "$held/wheels.tar")" = "$(sed -n 's/^sha256 //p' "$held/manifest")" ] ||
        die "the joined tar's sha256 differs from the manifest's (a part from another split?)" 1
    tar -xf "$held/wheels.tar" -C "$wheels" && rm "$held/wheels.tar" || die "tar -x failed" 1
    if [ "$1" = join ]; then
        mkdir -p "$out" && cp "$wheels"/*.whl "$out"/ || exit 1
        echo "gpu-wheels: $(ls "$wheels"/*.whl | wc -l) wheels into $out"
        exit 0
    fi
    site=${out:-/tmp/q35-peers-site}
    extra=$(ls .whl/*.whl 2>/dev/null || true)
    ${Q35_PIP:-python3 -m pip} install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
        "$wheels"/*.whl $extra || die "pip install into $site failed" 1
    echo "gpu-wheels: $(ls "$wheels"/*.whl | wc -l) wheels${extra:+ and .whl/} installed into $site: export PYTHONPATH=$site"
    ;;
*) die "usage: tools/gpu-wheels.sh split DIR | put | join DIR | install [SITE]" ;;
esac
