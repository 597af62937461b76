# regret.gp: how much slower auto dispatch is than the best forced path
# (auto / best, 1 = no regret) against bytes per rank, one panel per world
# size, one line per op (the worst dtype, mode and alignment at each size).
#   ARG1  base name: reads ARG1.dat, writes ARG1.png and ARG1.svg
#   ARG2  figure title
#   ARG3  world sizes, one panel each, in data block order ("2 4 8")
#   ARG4  data columns to draw ("2 3"); column c is series c-1
#   ARG5  series names, one per data column from column 2 (op names)
load "style.gp"
set ylabel "auto / best forced path"
set yrange [0.95:*]
# Headroom above the curves for the key.
set offsets 0, 0, graph 0.3, 0
set key top left horizontal
set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb "#888888"
nw = words(ARG3)
do for [fmt in "png svg"] {
  eval tune_term(fmt, nw * tune_panel_w, tune_panel_h)
  set output ARG1 . "." . fmt
  set multiplot layout 1, nw title ARG2 font ",12"
  do for [i = 1:nw] {
    set title "world " . word(ARG3, i)
    plot for [k = 1:words(ARG4)] ARG1 . ".dat" index (i - 1) \
         using 1:(column(word(ARG4, k) + 0)) with linespoints \
         lt (word(ARG4, k) - 1) title word(ARG5, word(ARG4, k) - 1)
  }
  unset multiplot
  set output
}
