# Shared by the plots: the PNG terminal first (out.".png"), then `call
# "svg.gp"` re-plots the same figure to out.".svg". Variables from the command
# line (-e): out, title, and each script's own.
set terminal pngcairo size 1280,760 font "sans,11" noenhanced
set output out.".png"
set title title
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key outside right top vertical Left reverse noenhanced
set border 3
set tics nomirror
