# The roofline: each benchmark's achieved FLOP/s against its arithmetic
# intensity (FLOP per byte it moves), one point type per family (a block of
# data each), under the measured ceilings: the device-to-device copy bandwidth
# times the intensity, and the SGEMM and HGEMM rates (each drawn only when
# measured, i.e. > 0). Variables: data, out, title, blocks, copy, sgemm, hgemm,
# xmin, xmax.
load "common.gp"
set logscale xy 10
set xrange [xmin:xmax]
set xlabel "arithmetic intensity (FLOP per byte read or written)"
set ylabel "achieved (FLOP/s)"
set format x "%g"
set format y "%.0s%c"
set samples 400
cmd = "plot for [i=0:blocks-1] data index i using 1:2 with points pt (7 + i % 6) ps 1.6 title columnheader(1)"
top = (sgemm > hgemm ? sgemm : hgemm) > 0 ? (sgemm > hgemm ? sgemm : hgemm) : 1e300
bandwidth(x) = x * copy < top ? x * copy : 1/0 # the slope, up to the highest compute ceiling
if (copy > 0) cmd = cmd . sprintf(", bandwidth(x) with lines dt 2 lw 2 lc rgb '#444444' title 'copy ceiling: %.2f TB/s x intensity'", copy / 1e12)
if (sgemm > 0) cmd = cmd . sprintf(", %.6e with lines lw 2 lc rgb '#1f77b4' title 'SGEMM ceiling (FP32, no TF32): %.1f TFLOP/s'", sgemm, sgemm / 1e12)
if (hgemm > 0) cmd = cmd . sprintf(", %.6e with lines lw 2 lc rgb '#d62728' title 'HGEMM ceiling (f16 in, f32 accumulate): %.0f TFLOP/s'", hgemm, hgemm / 1e12)
eval cmd
call "svg.gp"
