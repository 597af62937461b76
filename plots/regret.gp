# regret.gp: how much slower auto dispatch is than the best forced path
# (auto / best, 1 = no regret) against bytes per rank, one panel per world
# size, one line per op (the worst dtype, mode and alignment at each size),
# every size drawn; the worst point of all is circled and named.
#   ARG1  base name: reads ARG1.dat, writes ARG1.png and ARG1.svg
#   ARG2  figure title
#   ARG3  world sizes, one panel each, in data block order ("2 4 8")
#   ARG4  data columns to draw ("2 3"); column c is series c-1
#   ARG5  series names, one per data column from column 2 (op names)
#   ARG6  "lo hi": the y range fitted to the data, shared by every panel
#   ARG7  the worst point: "world bytes regret"; may be empty
#   ARG8  the worst configuration, in words (two more title lines)
load "style.gp"
set ylabel "auto / best forced path"
set key top left horizontal
set yrange [word(ARG6, 1) + 0 : word(ARG6, 2) + 0]
nw = words(ARG3)
do for [fmt in "png svg"] {
  eval tune_term(fmt, nw * tune_panel_w, tune_panel_h)
  set output ARG1 . "." . fmt
  set multiplot layout 1, nw title tune_title(ARG2) . (ARG8 eq "" ? "" : "\n" . ARG8) font ",12"
  do for [i = 1:nw] {
    set title "world " . word(ARG3, i)
    unset label
    unset object
    eval tune_sim_mark
    set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb "#888888"
    if (words(ARG7) == 3 && word(ARG7, 1) eq word(ARG3, i)) {
      set object 1 circle at word(ARG7, 2) + 0, word(ARG7, 3) + 0 size screen 0.012 \
          front fs empty border lc rgb "#000000" lw 1.5
      set label 1 sprintf("worst %.2fx", word(ARG7, 3) + 0) at word(ARG7, 2) + 0, \
          word(ARG7, 3) + 0 right offset -1.2, 0 font ",8" front
    }
    plot for [k = 1:words(ARG4)] ARG1 . ".dat" index (i - 1) \
         using 1:(column(word(ARG4, k) + 0)) with linespoints \
         lt (word(ARG4, k) - 1) title word(ARG5, word(ARG4, k) - 1)
  }
  unset multiplot
  set output
}
