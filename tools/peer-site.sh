# Sourced (. tools/peer-site.sh LOG): installs the peer wheels carried in .whl/
# (flash-linear-attention, fla-core: bench/README.md, "Peers") into a private
# folder, ${TMPDIR:-/tmp}/q35-peers-site, and puts it first on PYTHONPATH, so the
# peers that import fla (bench/peers.py, bench/hf_peer.py) find it on a machine
# with no package registry. pip's output goes to LOG. Where .whl/ holds no wheel
# or pip fails, it says so and changes nothing: the peers then say what they skip.
q35_site=${TMPDIR:-/tmp}/q35-peers-site
if ! ls .whl/*.whl >/dev/null 2>&1; then
    echo "peer-site: no wheels in .whl/ (the device README's pip download line): fla-backed peers are skipped or slower"
elif python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$q35_site" \
    .whl/*.whl >"${1:-/dev/null}" 2>&1; then
    export PYTHONPATH=$q35_site${PYTHONPATH:+:$PYTHONPATH}
else
    echo "peer-site: installing .whl/*.whl failed (${1:-the output of pip}): fla-backed peers are skipped or slower"
fi
