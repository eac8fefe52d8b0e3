# The number formats the record's tools share (tools/headline.sh,
# tools/results-file.sh, tools/device-report.sh; jq -L plots, include "fmt"):
# tokens/s as thousands with two decimals ("35.76k"), below 1000 with one
# ("245.0").
def tokens_k:
  if . < 1000 then (. * 10 | round / 10 | tostring) | (if test("[.]") then . else . + ".0" end)
  else (. / 10 | round) as $c | "\($c / 100 | floor).\($c % 100 | tostring | if length < 2 then "0" + . else . end)k"
  end;
