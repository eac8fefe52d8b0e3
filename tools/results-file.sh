#!/bin/bash
# Files one measured run under bench/results/ (bench/results/README.md): its
# folder <YYYY-MM-DD>-<device>-<commit7>/ gets the files, the run's README.md
# (device, commit, date, the commands, what the run shows) and a line of
# bench/results/index.tsv for each file (bench/results/SCHEMA.md, "The index").
#
#   tools/results-file.sh --commit C [--device NAME] [--date YYYY-MM-DD]
#       [--command CMD] [--what TEXT] [--family F] [--plots DIR] [--logs DIR]
#       [--git-mv] [--results DIR] FILE...
#   tools/results-file.sh --reindex [--results DIR]
#   tools/results-file.sh --slug NAME     the folder's device slug of NAME, printed
#
#   --commit C     the commit the tree was at (7+ hex digits; `-dirty` and
#                  `git describe`'s `-g` form accepted); the JSON's git_describe
#                  is not trusted (a device's copy of the history can differ)
#   --device NAME  `NVIDIA H100 80GB HBM3` or `h100`; the folder takes its slug
#                  (h100); default: the first JSON's context.device
#   --date D       the run's day; default: the first JSON's context.date, else today
#   --command CMD  the command that ran (repeatable); default: each JSON's
#                  context.command
#   --what TEXT    what the run shows (markdown, one paragraph; repeatable)
#   --family F     the index's family for every file of this call, in place of
#                  the one read from each file (e.g. `prefill-ab` for an A/B or
#                  an experiment's run, which tools/headline.sh leaves out)
#   --plots DIR    plots/plot.sh's output: its files go to the folder's plots/
#   --logs DIR     a folder of logs, tarred into the folder's logs.tgz
#   --git-mv       move the files with `git mv` (files already in the tree)
#   (a .log or .txt FILE past 60 KB is filed gzipped, as NAME.gz, unless --git-mv)
#   --reindex      rewrite index.tsv from every run folder: every headline read
#                  again, a file's family kept from its line where it has one
#
# A folder filed again keeps its README.md and gets the new commands and text
# appended. The index stays sorted by date, device, commit, file.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
JQ=${JQ:-jq}
results=$root/bench/results
tab=$(printf '\t')
die() { echo "results-file: $*" >&2; exit 2; }

# slug NAME: the device's short name, lower case: `NVIDIA H100 80GB HBM3` -> h100
slug() {
    printf '%s\n' "$1" | tr 'A-Z' 'a-z' | sed 's/^nvidia //; s/ .*//; s/-.*//; s/[^a-z0-9]//g'
}
# short_commit C: 7 hex digits from a commit, `-dirty` or `git describe` form
short_commit() {
    printf '%s\n' "$1" | sed 's/-dirty$//; s/^.*-g\([0-9a-f]*\)$/\1/' | cut -c1-7 | grep -E '^[0-9a-f]{7}$'
}
is_json() { case $1 in *.json) "$JQ" -e '.benchmarks | type == "array"' "$1" >/dev/null 2>&1 ;; *) return 1 ;; esac; }

# family FILE: the benchmark family of a results JSON (its executable:
# bench_prefill -> prefill, hf_peer.py -> peer_hf; a merged file's sources
# joined by +), else the kind of file: text, logs, plot, json (not a benchmark file)
family() {
    if is_json "$1"; then
        "$JQ" -r '[(.context.sources // [.context])[] | .executable // "unknown" | split("/") | last
                   | sub("\\.py$"; "") | sub("^bench_"; "") | if . == "hf_peer" then "peer_hf" else . end]
                  | unique | join("+")' "$1"
        return
    fi
    case $1 in
    *.json) echo json ;;
    *.tgz | *.tar.gz) echo logs ;;
    *.png | *.svg) echo plot ;;
    *) echo text ;;
    esac
}

# headline FILE: a results JSON's figure: tokens/s at each prompt length (a
# prefill) or cache length (a decode step, "ctx") per configuration (the axes
# but that one, in the name's order), else its count of points; a KLD report's
# rows; what any other file is
headline() {
    if ! is_json "$1"; then
        case $1 in
        *.json) # tools/kld_report.py's --json: its rows per side; any other JSON named as such
            "$JQ" -er 'select(type == "object" and (.cpu | type) == "array" and (.gpu | type) == "array")
                       | "KLD report: \(.cpu | length) CPU rows, \(.gpu | length) GPU rows"' "$1" 2>/dev/null ||
                echo "JSON, not a benchmark file" ;;
        *) echo "-" ;;
        esac
        return
    fi
    "$JQ" -f "$root/plots/points.jq" "$1" | "$JQ" -L "$root/plots" -r 'include "fmt";
      def ax: if .axes.len != null then "len" else "ctx" end;  # a prefill'"'"'s prompt length, a decode step'"'"'s cache
      [.[] | select(.tokens_per_s != null and (.axes.len // .axes.ctx) != null)] as $p
      | if ($p | length) == 0 then "\(length) points"
        else $p | group_by([.family, ax, (ax as $a | .axes | del(.[$a]) | to_entries | map(.value))])
          | map((.[0] | ax as $a | [.family] + (.axes | del(.[$a]) | to_entries | map(.value)) | join("/")) + ": "
                + (.[0] | ax | if . == "ctx" then "ctx " else "" end)
                + (sort_by(.axes[ax] | tonumber) | map("\(.axes[ax]) \(.tokens_per_s | tokens_k)") | join(", ")))
          | join("; ")
          | if length > 400 then .[0:397] + "..." else . end
        end'
}

# index_line DIR FILE: the index's line of FILE (relative to DIR, a run folder)
index_line() {
    local run day rest
    run=$(basename "$1")
    day=$(printf '%s' "$run" | cut -c1-10)
    rest=${run#"$day"-}
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$day" "${rest%-*}" "${rest##*-}" \
        "${family_override:-${kept_family[$run/$2]:-$(family "$1/$2")}}" \
        "$run/$2" "$(headline "$1/$2")"
}

# write_index LINES_FILE: the index from LINES_FILE, sorted, under its header
write_index() {
    { printf 'date\tdevice\tcommit\tfamily\tfile\theadline\n'
      sort -t "$tab" -k1,1 -k2,2 -k3,3 -k5,5 "$1"; } >"$results/index.tsv.new"
    mv "$results/index.tsv.new" "$results/index.tsv"
}

declare -A kept_family=()
device="" commit="" date="" family_override="" plots="" logs="" gitmv=0 reindex=0
commands=() whats=() files=()
while [ $# -gt 0 ]; do
    case $1 in
    --device) device=$2; shift 2 ;;
    --commit) commit=$2; shift 2 ;;
    --date) date=$2; shift 2 ;;
    --command) commands+=("$2"); shift 2 ;;
    --what) whats+=("$2"); shift 2 ;;
    --family) family_override=$2; shift 2 ;;
    --plots) plots=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --git-mv) gitmv=1; shift ;;
    --reindex) reindex=1; shift ;;
    --slug) [ $# -ge 2 ] || die "--slug needs a device name"; slug "$2"; exit 0 ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; files+=("$@"); break ;;
    -*) die "unknown option $1 (--help)" ;;
    *) files+=("$1"); shift ;;
    esac
done
set -- "${files[@]+"${files[@]}"}"
command -v "$JQ" >/dev/null 2>&1 || { echo "results-file: jq not found (tools/deps.sh installs it)" >&2; exit 1; }
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT

if [ "$reindex" = 1 ]; then
    # a file's family as filed (--family) is kept; the rest is read again
    declare -A kept_family=()
    if [ -f "$results/index.tsv" ]; then
        while IFS="$tab" read -r _ _ _ fam file _; do kept_family[$file]=$fam; done < <(tail -n +2 "$results/index.tsv")
    fi
    for d in "$results"/2[0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]-*/; do
        [ -d "$d" ] || continue
        d=${d%/}
        (cd "$d" && find . -type f ! -path ./README.md | sed 's|^\./||' | LC_ALL=C sort) | while IFS= read -r f; do
            index_line "$d" "$f"
        done
    done >"$lines"
    write_index "$lines"
    echo "results-file: $results/index.tsv: $(wc -l <"$lines") files"
    exit 0
fi

[ $# -ge 1 ] || [ -n "$plots" ] || [ -n "$logs" ] || die "nothing to file (--help)"
[ -n "$commit" ] || die "--commit is needed"
commit7=$(short_commit "$commit") || die "--commit $commit: not a commit"
json=""
for f in "$@"; do
    [ -f "$f" ] || die "cannot read $f"
    [ -z "$json" ] && is_json "$f" && json=$f
done
if [ -z "$device" ] && [ -n "$json" ]; then
    device=$("$JQ" -r '.context.device // ([.context.sources[]?.device] | first) // ""' "$json")
fi
[ -n "$device" ] || die "--device is needed (no JSON names it)"
dslug=$(slug "$device")
[ -n "$dslug" ] || die "--device $device: no name left for the folder"
if [ -z "$date" ] && [ -n "$json" ]; then
    date=$("$JQ" -r '(.context.date // ([.context.sources[]?.date] | max) // "")[0:10]' "$json")
fi
[ -n "$date" ] || date=$(date -u +%F)
printf '%s\n' "$date" | grep -Eq '^[0-9]{4}-[01][0-9]-[0-3][0-9]$' || die "--date $date: not YYYY-MM-DD"

name=$date-$dslug-$commit7
dir=$results/$name
mkdir -p "$dir"
# put SRC DEST: the file into the folder, copied or moved by git
put() {
    mkdir -p "$(dirname "$2")"
    if [ "$gitmv" = 1 ]; then git -C "$root" mv -k "$1" "$2"; else cp "$1" "$2"; fi
    [ -f "$2" ] || die "$1 was not filed"
}
# big_text FILE: a log or text file past 60 KB, filed gzipped (the tree travels to a device within 64 MiB)
big_text() { case $1 in *.log | *.txt) [ "$(wc -c <"$1")" -gt 60000 ] ;; *) return 1 ;; esac; }
filed=()
for f in "$@"; do
    b=$(basename "$f")
    if [ "$gitmv" != 1 ] && big_text "$f"; then
        gzip -9 -n -c "$f" >"$dir/$b.gz" || die "$f was not filed"
        b=$b.gz
    else
        put "$f" "$dir/$b"
    fi
    filed+=("$b")
done
if [ -n "$plots" ]; then
    for f in "$plots"/*; do
        [ -f "$f" ] || continue
        put "$f" "$dir/plots/$(basename "$f")"
        filed+=("plots/$(basename "$f")")
    done
fi
if [ -n "$logs" ]; then
    tar czf "$dir/logs.tgz" -C "$logs" .
    filed+=("logs.tgz")
fi

# the run's README.md: written once, then appended to
if [ ${#commands[@]} -eq 0 ]; then
    for f in "${filed[@]}"; do
        is_json "$dir/$f" || continue
        c=$("$JQ" -r '[(.context.sources // [.context])[] | .command // empty] | unique | .[]' "$dir/$f")
        [ -n "$c" ] && while IFS= read -r l; do commands+=("$l"); done <<<"$c"
    done
fi
new=1
[ -f "$dir/README.md" ] && new=0
{
    if [ "$new" = 1 ]; then
        full=$device
        [ -n "$json" ] && full=$("$JQ" -r --arg d "$device" '.context.device // $d' "$dir/$(basename "$json")")
        printf '# %s, %s, %s\n\n' "$date" "$full" "$commit7"
        printf -- '- device: %s\n- commit: %s (the tree the run measured)\n- date: %s\n' "$full" "$commit7" "$date"
        printf -- '- index: the lines of `%s/` in [../index.tsv](../index.tsv)\n' "$name"
    else
        printf '\n## Filed later: %s\n' "${filed[*]}"
    fi
    if [ ${#commands[@]} -gt 0 ]; then
        printf '\nThe commands:\n\n```sh\n'
        printf '%s\n' "${commands[@]}" | awk '!seen[$0]++'
        printf '```\n'
    fi
    for w in "${whats[@]+"${whats[@]}"}"; do printf '\n%s\n' "$w"; done
    printf '\nFiles: %s\n' "$(printf '`%s` ' "${filed[@]}" | sed 's/ $//')"
} >>"$dir/README.md"
[ "$gitmv" = 1 ] && git -C "$root" add "$dir/README.md"

# the index: its lines of these files replaced
if [ -f "$results/index.tsv" ]; then
    tail -n +2 "$results/index.tsv" | awk -F'\t' -v d="$name/" -v fs="$(printf '%s\n' "${filed[@]}")" '
      BEGIN { n = split(fs, a, "\n"); for (i = 1; i <= n; i++) skip[d a[i]] = 1 } !($5 in skip)' >"$lines"
fi
for f in "${filed[@]}"; do index_line "$dir" "$f"; done >>"$lines"
write_index "$lines"
echo "results-file: filed ${#filed[@]} file(s) in $dir"
