# Pairs of benchmark points (points.jq's) by a name map such as bench/peers.map:
# read by tools/bench-compare.sh (--map) and plots/plot.sh (the peer figures).
#
# A map is text, one rule a line, `#` to the end of a line a comment:
#     OURS  PEER
# two names without "/manual_time"; `{axis}` in OURS matches one value of the
# name (no '/') and PEER takes the value matched, e.g.
#     flash_chunk/model:{m}/ctx:{c}/split:0   peer_sdpa/model:{m}/ctx:{c}/query:chunk
# pairs flash_chunk/model:1/ctx:4096/split:0 with peer_sdpa/model:1/ctx:4096/query:chunk.
# A name may match several rules (one of ours against several peers).

def re_escape: gsub("(?<c>[\\\\.^$|?*+()\\[\\]{}])"; "\\\(.c)");

# A rule's OURS as an anchored regex with a named group per {axis}.
def pattern_re:
  "^" + ([scan("\\{[a-z_]+\\}|[^{]+")]
         | map(if test("^\\{[a-z_]+\\}$") then "(?<\(.[1:-1])>[^/]+)" else re_escape end) | join("")) + "$";

# The map's text -> [{line, a, b, re}]; a line that is not two names is an error naming it.
def map_rules:
  [split("\n") | to_entries[] | {line: (.key + 1), words: [.value | sub("#.*$"; "") | splits("[ \t]+") | select(length > 0)]}
   | select(.words | length > 0)
   | if (.words | length) != 2 then error("map line \(.line): want OURS PEER, got: \(.words | join(" "))")
     else {line, a: .words[0], b: .words[1], re: (.words[0] | pattern_re)} end];

# PEER with each {axis} replaced by its captured value.
def fill($caps): reduce ($caps | to_entries[]) as $e (.; gsub("\\{\($e.key)\\}"; $e.value));

# The points of the input (ours) paired by $rules with $peers' points on the same
# device: [{rule, caps, a: point, b_id, b: point or null}], rule by rule, each
# rule's in the order of the names' numbers (len:512 before len:4096).
def pairs($rules; $peers):
  . as $ours
  | ($peers | map({key: "\(.device)\t\(.id)", value: .}) | from_entries) as $by
  | [$rules[] as $r | $ours | sort_by([.id | splits("[/:]") | (tonumber? // .)])[] | . as $a | (.id | capture($r.re)) as $caps
     | ($r.b | fill($caps)) as $bid
     | {rule: $r, caps: $caps, a: $a, b_id: $bid, b: $by["\($a.device)\t\($bid)"]}];
