# compare.gp: tune compare -- new median / baseline median against bytes
# per rank, for one op and world size; one series per impl and path (every
# dtype, mode, offset and skew of it as points), the tolerance band shaded.
# Run as `gnuplot -d -c compare.gp BASE TITLE SERIES TOL` in the output
# folder: BASE.dat in (one block per series, rows "bytes ratio"), BASE.png
# and BASE.svg out.
#   ARG1  base name
#   ARG2  figure title
#   ARG3  series names, one per data block ("detcoll:auto nccl:auto")
#   ARG4  the tolerance as a fraction ("0.05")
set encoding utf8
set border 3 lc rgb "#555555"
set tics nomirror out
set grid xtics ytics lw 1 lc rgb "#e5e5e5"
set key outside right top font ",9" noenhanced
set logscale x 2
set format x "%.0b%B"
set xlabel "bytes per rank"
set ylabel "new / baseline (median)"
tol = ARG4 + 0
set object 1 rect from graph 0, first (1 - tol) to graph 1, first (1 + tol) \
    fc rgb "#eeeeee" fs solid noborder behind
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb "#888888"
set title ARG2 noenhanced
do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo size 900, 480 font ",10" } \
  else { set terminal svg size 900, 480 font ",10" }
  set output ARG1 . "." . fmt
  plot for [i = 1:words(ARG3)] ARG1 . ".dat" index (i - 1) using 1:2 \
       with points pt (5 + 2 * ((i - 1) % 6)) ps 0.7 title word(ARG3, i)
  set output
}
