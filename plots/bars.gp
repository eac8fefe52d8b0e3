# Clustered bars: one cluster per row (its label in column 1), one bar per
# column 2..ncols (a device, titled by the header row). Variables: data, out,
# title, ylabel, ncols, logy (0/1), yformat; optionally y2cols (the last y2cols
# columns drawn as points against a right axis, log 2, with a dotted line at 1)
# and y2label; the key then goes below the plot.
load "common.gp"
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set ylabel ylabel
set format y yformat
if (logy) set logscale y 10; else set yrange [0:*]
set xtics rotate by -30
if (!exists("y2cols")) y2cols = 0
n1 = ncols - y2cols
cmd = "plot for [c=2:n1] data using c:xtic(1) title columnheader(c)"
if (y2cols > 0) {
    set border 11
    set key below Left reverse noenhanced
    set ytics nomirror
    set y2tics nomirror
    set logscale y2 2
    set format y2 "%g"
    set y2label y2label
    cmd = cmd . ", for [c=n1+1:ncols] data using 0:c axes x1y2 with points pt (5 + 2 * (c - n1 - 1)) ps 1.8 lc (c - n1 + 1) title columnheader(c), 1 axes x1y2 with lines lc rgb '#777777' dt 3 notitle"
}
eval cmd
call "svg.gp"
