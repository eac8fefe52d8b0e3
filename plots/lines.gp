# Lines, one per block of data (blocks separated by two blank lines, each
# opening with its title): x against y. Variables: data, out, title, xlabel,
# ylabel, blocks, logx (0, or the base), logy (0/1), yformat.
load "common.gp"
set xlabel xlabel
set ylabel ylabel
if (logx > 0) set logscale x logx
if (logy) set logscale y 10
set format x "%.0f"
set format y yformat
dash(i) = i / 8 % 3 + 1 # eight colours, then dashes
plot for [i=0:blocks-1] data index i using 1:2 with linespoints lw 2 lc (i % 8 + 1) pt (7 - 2 * (i / 8 % 2)) dt dash(i) ps 1.1 title columnheader(1)
call "svg.gp"
