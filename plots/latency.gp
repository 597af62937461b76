# latency.gp: median latency against bytes per rank, one panel per world size,
# one line per series (before, after, NCCL, NCCL_symm, before_paired: the
# previous table in the after pass's paired trials); under each panel a
# ratio panel (after / before paired -- the after pass's same-trial ratio,
# with its CI as error bars --, after / before unpaired -- two passes a
# minute apart --, after / best NCCL: below 1 the after run is faster),
# since a log-log plot over five decades hides a 20% gain.
#   ARG1  base name: reads ARG1.dat, writes ARG1.png and ARG1.svg
#   ARG2  figure title
#   ARG3  world sizes, one panel each, in data block order ("2 4 8")
#   ARG4  latency columns to draw ("2 3 4"); column c is series c-1
#   ARG5  series names, one per data column from column 2 ("before after NCCL
#         NCCL\_symm after/before\_paired ...")
#   ARG6  the figure's y ranges, shared by every world panel: "lo hi" of the
#         latency, then "lo hi" of the ratios
#   ARG7  ratio columns to draw ("6 7 8"); may be empty (no ratio panel)
#   ARG8  the paired ratio's column and its CI columns ("6 9 10"); may be
#         empty (no paired figures: no error bars)
# Values are microseconds.
load "style.gp"
nw = words(ARG3)
nr = words(ARG7)
ratio_h = nr ? 220 : 0
# Fixed margins (characters) so a latency panel and its ratio panel share x.
set lmargin 10
set rmargin 2
do for [fmt in "png svg"] {
  eval tune_term(fmt, nw * tune_panel_w, tune_panel_h + ratio_h)
  set output ARG1 . "." . fmt
  set multiplot title tune_title(ARG2) font ",12"
  top = nr ? real(ratio_h) / (tune_panel_h + ratio_h) : 0
  do for [i = 1:nw] {
    set origin (i - 1.0) / nw, top
    set size 1.0 / nw, (1 - top) * 0.95
    set logscale y 10
    set yrange [word(ARG6, 1) + 0 : word(ARG6, 2) + 0]
    set ylabel "median latency (us)"
    set key top left
    set title "world " . word(ARG3, i)
    if (nr) { eval tune_xtics_blank; unset xlabel; set bmargin 1 } else { set bmargin }
    eval tune_sim_mark
    plot for [k = 1:words(ARG4)] ARG1 . ".dat" index (i - 1) \
         using 1:(column(word(ARG4, k) + 0)) with linespoints \
         lt (word(ARG4, k) - 1) title word(ARG5, word(ARG4, k) - 1)
    if (nr) {
      set origin (i - 1.0) / nw, 0
      set size 1.0 / nw, top
      unset logscale y
      set yrange [word(ARG6, 3) + 0 : word(ARG6, 4) + 0]
      set ylabel "ratio (<1: after faster)"
      eval tune_xtics
      set xlabel "bytes per rank"
      unset title
      set tmargin 0.5
      set bmargin 3.5
      set key top left horizontal font ",8"
      set arrow 91 from graph 0, first 1 to graph 1, first 1 nohead lc rgb "#888888"
      unset label 90
      if (words(ARG8) == 3) {
        plot for [k = 1:nr] ARG1 . ".dat" index (i - 1) \
             using 1:(column(word(ARG7, k) + 0)) with linespoints \
             lt (word(ARG7, k) + 1) title word(ARG5, word(ARG7, k) - 1), \
             ARG1 . ".dat" index (i - 1) using 1:(column(word(ARG8, 1) + 0)): \
             (column(word(ARG8, 2) + 0)):(column(word(ARG8, 3) + 0)) with yerrorbars \
             lt (word(ARG8, 1) + 1) pt 0 title "paired CI"
      } else {
        plot for [k = 1:nr] ARG1 . ".dat" index (i - 1) \
             using 1:(column(word(ARG7, k) + 0)) with linespoints \
             lt (word(ARG7, k) + 1) title word(ARG5, word(ARG7, k) - 1)
      }
      unset arrow 91
      set tmargin
    }
  }
  unset multiplot
  set output
}
