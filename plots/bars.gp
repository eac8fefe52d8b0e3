# Clustered bars: one cluster per row (its label in column 1), one bar per
# column 2..ncols (a device, titled by the header row). Variables: data, out,
# title, ylabel, ncols, logy (0/1), yformat.
load "common.gp"
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set ylabel ylabel
set format y yformat
if (logy) set logscale y 10
set xtics rotate by -30
plot for [c=2:ncols] data using c:xtic(1) title columnheader(c)
call "svg.gp"
