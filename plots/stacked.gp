# Stacked bars: one bar per row (its label in column 1), columns 2..ncols
# stacked, each titled by the header row. Variables: data, out, title, xlabel,
# ylabel, ncols.
load "common.gp"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7
set xlabel xlabel
set ylabel ylabel
set yrange [0:100]
set xtics rotate by -20
plot for [c=2:ncols] data using c:xtic(1) title columnheader(c)
call "svg.gp"
