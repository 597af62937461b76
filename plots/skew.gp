# skew.gp: skew sensitivity -- residence against the measured delay for the
# rank roles max (slowest rank), injected (the delayed rank) and last (the
# rank that waited least), one panel per (impl, mode).
#   ARG1  base name: reads ARG1.dat, writes ARG1.png and ARG1.svg
#   ARG2  figure title
#   ARG3  panels, one word each in data block order ("detcoll/eager nccl/graph")
#   ARG4  fitted lines, 6 words per panel: slope and intercept (us) of max,
#         injected and last; "-" where a role has no fit
# Data rows: measured delay, then median, p10 and p90 of each role (us).
load "style.gp"
unset logscale x
set xtics autofreq
set xlabel "measured delay (us)"
set ylabel "residence (us)"
set key top left
roles = "max injected last"
# A fitted line, or nothing where there is no fit (1/0 is undefined).
fit_word(p, r, k) = word(ARG4, 6 * (p - 1) + 2 * (r - 1) + k)
has_fit(p, r) = fit_word(p, r, 1) ne "-"
fit_line(p, r, x) = has_fit(p, r) ? fit_word(p, r, 1) * x + fit_word(p, r, 2) : 1/0
np = words(ARG3)
do for [fmt in "png svg"] {
  eval tune_term(fmt, np * tune_panel_w, tune_panel_h)
  set output ARG1 . "." . fmt
  set multiplot layout 1, np title tune_title(ARG2) font ",12"
  do for [p = 1:np] {
    set title word(ARG3, p)
    eval tune_sim_mark
    plot for [r = 1:3] ARG1 . ".dat" index (p - 1) \
           using 1:(column(3 * r - 1)):(column(3 * r)):(column(3 * r + 1)) \
           with yerrorbars lt r title word(roles, r), \
         for [r = 1:3] fit_line(p, r, x) with lines lt r dt 2 notitle
  }
  unset multiplot
  set output
}
