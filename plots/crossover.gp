# crossover.gp: each forced kernel path's median latency from a sweep against
# bytes per rank, one panel per world size. Each chosen threshold is a dashed
# vertical line over a grey band (the size bracket the crossover was found
# in), numbered at the top (numbers staggered so neighbours do not collide)
# and listed under the panel. A curve that stops before the panel's last size
# was pruned by the sweep (a path far behind the best is not measured at
# larger sizes); a note at its last point says how far behind it was there.
#   ARG1  base name: reads ARG1.dat, writes ARG1.png and ARG1.svg
#   ARG2  figure title
#   ARG3  world sizes, one panel each, in data block order ("2 4 8")
#   ARG4  data columns to draw ("2 5 6"); column c is series c-1
#   ARG5  series names, one per data column from column 2 (path names)
#   ARG6  "lo hi": the y range, shared by every world panel
#   ARG7  thresholds, seven words each: world bytes lo hi label size bracket
#         ("4 65536 49152 98304 one\_shot/two\_shot 64K 48K..96K"); bracket
#         is "-" where there is none; may be empty
#   ARG8  pruned curves, five words each: world column bytes value ratio
#         (the curve of column stops at bytes, value us, ratio x the best
#         path there); may be empty
# Values are microseconds.
load "style.gp"
set logscale y 10
set ylabel "median latency (us)"
set key top left
nw = words(ARG3)
# The most thresholds in one panel: that many table lines under each panel.
nmax = 0
do for [i = 1:nw] {
  m = 0
  do for [t = 1:words(ARG7):7] { if (word(ARG7, t) eq word(ARG3, i)) { m = m + 1 } }
  nmax = m > nmax ? m : nmax
}
line_h = 15
do for [fmt in "png svg"] {
  eval tune_term(fmt, nw * tune_panel_w, tune_panel_h + nmax * line_h)
  set output ARG1 . "." . fmt
  set multiplot layout 1, nw title tune_title(ARG2) font ",12"
  set bmargin 4 + nmax
  set yrange [word(ARG6, 1) + 0 : word(ARG6, 2) + 0]
  do for [i = 1:nw] {
    set title "world " . word(ARG3, i)
    unset arrow
    unset label
    unset object
    eval tune_sim_mark
    m = 0
    do for [t = 1:words(ARG7):7] {
      if (word(ARG7, t) eq word(ARG3, i)) {
        m = m + 1
        b = word(ARG7, t + 1) + 0
        lo = word(ARG7, t + 2) + 0
        hi = word(ARG7, t + 3) + 0
        if (hi > lo) {
          set object rect from lo, graph 0 to hi, graph 1 behind \
              fc rgb "#999999" fs transparent solid 0.18 noborder
        }
        set arrow from b, graph 0 to b, graph 1 nohead dt 2 lw 1.5 lc rgb "#333333"
        set label sprintf("%d", m) at b, graph (m % 2 ? 0.97 : 0.91) center \
            font ",8" tc rgb "#333333" front boxed
        set label sprintf("%d  %s %s%s", m, word(ARG7, t + 4), word(ARG7, t + 5), \
            word(ARG7, t + 6) eq "-" ? "" : "  (bracket " . word(ARG7, t + 6) . ")") \
            at graph 0, graph 0 offset -6, -3.2 - m font ",8" tc rgb "#333333" left
      }
    }
    do for [t = 1:words(ARG8):5] {
      if (word(ARG8, t) eq word(ARG3, i)) {
        q = word(ARG8, t + 4) + 0
        set label (q >= 2 ? sprintf("pruned: %.1fx behind", q) : "not measured above") \
            at word(ARG8, t + 2) + 0, word(ARG8, t + 3) + 0 center offset 0, 1 \
            font ",7" tc lt (word(ARG8, t + 1) - 1) front
      }
    }
    plot for [k = 1:words(ARG4)] ARG1 . ".dat" index (i - 1) \
         using 1:(column(word(ARG4, k) + 0)) with linespoints \
         lt (word(ARG4, k) - 1) title word(ARG5, word(ARG4, k) - 1)
  }
  unset multiplot
  set output
}
