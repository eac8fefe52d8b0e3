#!/bin/sh
# tools/gpu-wheels.sh without a GPU: three made-up wheels split into 1 MB
# parts, put over several "calls" (one part each) into a parts folder, joined
# back bitwise; join refusing while a part is missing or a part is from
# another split; install handing every wheel to pip (a stand-in that lists
# them); the usage errors.
#   tools/tests/gpu-wheels.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
rm -rf "$tmp" && mkdir -p "$tmp/w" || exit 1
tool=$src/tools/gpu-wheels.sh
export Q35_WHEEL_PARTS=$tmp/parts Q35_WHEEL_PARTS_DIR=$tmp/held Q35_PART_MB=1
for n in a-1.0-py3-none-any b-2.0-py3-none-any c-0.1-cp312-abi3-manylinux_2_28_x86_64; do
    head -c 900000 /dev/urandom >"$tmp/w/$n.whl"
done
check "split: three wheels into parts" sh -c "'$tool' split '$tmp/w' >'$tmp/split.log' 2>&1"
check "  three parts of at most 1 MB and a manifest" sh -c "[ \$(ls '$tmp/parts'/part.* | wc -l) -eq 3 ] &&
    [ \$(wc -c <'$tmp/parts/part.00') -eq 1048576 ] && grep -q '^parts 3$' '$tmp/parts/manifest'"
check "  each call's carry printed" sh -c "[ \$(grep -c 'carry \\[' '$tmp/split.log') -eq 3 ]"
# the calls: each brings the manifest and one part
mkdir -p "$tmp/all" && mv "$tmp/parts"/part.* "$tmp/all/"
cp "$tmp/all/part.00" "$tmp/parts/" && "$tool" put >"$tmp/put0.log" 2>&1
check "put: one of three held" grep -q "holds 1 of 3 parts" "$tmp/put0.log"
check "join with a part missing: exit 1, naming the missing" sh -c "! '$tool' join '$tmp/out' >'$tmp/join-missing.log' 2>&1 &&
    grep -q 'parts missing: part.01 part.02' '$tmp/join-missing.log'"
rm "$tmp/parts"/part.* && cp "$tmp/all/part.01" "$tmp/parts/" && "$tool" put >/dev/null 2>&1
rm "$tmp/parts"/part.* && cp "$tmp/all/part.02" "$tmp/parts/" && "$tool" put >"$tmp/put2.log" 2>&1
check "put: three of three held after three calls" grep -q "holds 3 of 3 parts" "$tmp/put2.log"
check "join: the wheels back" sh -c "'$tool' join '$tmp/out' >'$tmp/join.log' 2>&1"
check "  bitwise" sh -c "for f in '$tmp/w'/*.whl; do cmp -s \"\$f\" '$tmp/out'/\$(basename \"\$f\") || exit 1; done"
printf '#!/bin/sh\necho "pip $*" >"%s/pip.log"\n' "$tmp" >"$tmp/pip" && chmod +x "$tmp/pip"
check "install: pip given every wheel into the site" sh -c "Q35_PIP='$tmp/pip' '$tool' install '$tmp/site' >'$tmp/install.log' 2>&1 &&
    grep -q -- '--target $tmp/site' '$tmp/pip.log' && [ \$(grep -o '\\.whl' '$tmp/pip.log' | wc -l) -ge 3 ] &&
    grep -q 'export PYTHONPATH=$tmp/site' '$tmp/install.log'"
head -c 1000 /dev/urandom >"$tmp/held/part.01"
check "join with a part from elsewhere: exit 1, the sha256 named" sh -c "! '$tool' join '$tmp/out2' >'$tmp/join-bad.log' 2>&1 &&
    grep -q 'sha256 differs' '$tmp/join-bad.log'"
check "split without a folder: exit 2" sh -c "'$tool' split >/dev/null 2>&1; [ \$? -eq 2 ]"
check "split of a folder without wheels: exit 2" sh -c "mkdir -p '$tmp/empty'; '$tool' split '$tmp/empty' >/dev/null 2>&1; [ \$? -eq 2 ]"
check "a bad Q35_PART_MB: exit 2, named" sh -c "Q35_PART_MB=x '$tool' split '$tmp/w' 2>&1 | grep -q 'Q35_PART_MB=x'"
check "an unknown command: exit 2 with the usage" sh -c "'$tool' fetch 2>&1 | grep -q 'usage:'"
finish
