# Lines, one per block of data (blocks separated by two blank lines, each
# opening with its title): x against y. Variables: data, out, title, xlabel,
# ylabel, blocks, logx (0, or the base), logy (0/1), yformat; optionally
# y2blocks (the last y2blocks blocks drawn against a right axis, log 2, with a
# dotted line at 1, each in the colour of the block y2blocks before it, or of
# the block y2colors names for it: 1-based block numbers, one a y2 block) and
# y2label; the key then goes below the plot.
load "common.gp"
set xlabel xlabel
set ylabel ylabel
if (logx > 0) set logscale x logx
if (logy) set logscale y 10
set format x "%.0f"
set format y yformat
if (!exists("y2blocks")) y2blocks = 0
n1 = blocks - y2blocks
dash(i) = i / 8 % 3 + 1 # eight colours, then dashes
cmd = "plot for [i=0:n1-1] data index i using 1:2 with linespoints lw 2 lc (i % 8 + 1) pt (7 - 2 * (i / 8 % 2)) dt dash(i) ps 1.1 title columnheader(1)"
if (y2blocks > 0) {
    set border 11
    set key below Left reverse noenhanced
    set ytics nomirror
    set y2tics nomirror
    set logscale y2 2
    set format y2 "%g"
    set y2label y2label
    if (!exists("y2colors")) { y2colors = "" }
    if (words(y2colors) != y2blocks) { y2colors = "" }
    y2lc(i) = (y2colors eq "" ? i - y2blocks : word(y2colors, i - n1 + 1) - 1) % 8 + 1
    cmd = cmd . ", for [i=n1:blocks-1] data index i using 1:2 axes x1y2 with linespoints lw 1.5 lc y2lc(i) pt 4 dt 2 ps 0.9 title columnheader(1), 1 axes x1y2 with lines lc rgb '#777777' dt 3 notitle"
}
eval cmd
call "svg.gp"
