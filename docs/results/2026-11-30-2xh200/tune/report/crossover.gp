# crossover.gp: each forced kernel path's median latency from a sweep against
# bytes per rank, one panel per world size, with the chosen thresholds marked
# as labelled vertical lines.
#   ARG1  base name: reads ARG1.dat, writes ARG1.png and ARG1.svg
#   ARG2  figure title
#   ARG3  world sizes, one panel each, in data block order ("2 4 8")
#   ARG4  data columns to draw ("2 5 6"); column c is series c-1
#   ARG5  series names, one per data column from column 2 (path names)
#   ARG6  thresholds, four words each: world bytes label size ("4 65536
#         one_shot/two_shot 64K ..."); may be empty
# Values are microseconds.
load "style.gp"
set logscale y 10
set ylabel "median latency (us)"
set key bottom right
nw = words(ARG3)
do for [fmt in "png svg"] {
  eval tune_term(fmt, nw * tune_panel_w, tune_panel_h)
  set output ARG1 . "." . fmt
  set multiplot layout 1, nw title ARG2 font ",12"
  do for [i = 1:nw] {
    set title "world " . word(ARG3, i)
    unset arrow
    unset label
    do for [t = 1:words(ARG6):4] {
      if (word(ARG6, t) eq word(ARG3, i)) {
        b = word(ARG6, t + 1) + 0
        set arrow from b, graph 0 to b, graph 1 nohead dt 2 lw 1.5 lc rgb "#333333"
        set label word(ARG6, t + 2) . " " . word(ARG6, t + 3) at b, graph 0.97 \
            rotate by 90 right offset 1, 0 font ",8" tc rgb "#333333"
      }
    }
    plot for [k = 1:words(ARG4)] ARG1 . ".dat" index (i - 1) \
         using 1:(column(word(ARG4, k) + 0)) with linespoints \
         lt (word(ARG4, k) - 1) title word(ARG5, word(ARG4, k) - 1)
  }
  unset multiplot
  set output
}
