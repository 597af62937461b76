# latency.gp: median latency against bytes per rank, one panel per world size,
# one line per series (before, after, NCCL, NCCL_symm).
#   ARG1  base name: reads ARG1.dat, writes ARG1.png and ARG1.svg
#   ARG2  figure title
#   ARG3  world sizes, one panel each, in data block order ("2 4 8")
#   ARG4  data columns to draw ("2 3 4"); column c is series c-1
#   ARG5  series names, one per data column from column 2 ("before after NCCL NCCL_symm")
# Values are microseconds.
load "style.gp"
set logscale y 10
set ylabel "median latency (us)"
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
