# The figure just plotted, again as SVG (out.".svg").
set terminal svg size 1280,760 dynamic font "sans,11" noenhanced
set output out.".svg"
replot
unset output
