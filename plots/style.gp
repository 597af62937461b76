# style.gp: the look every detcoll report plot shares; each template loads it
# first. Templates run as `gnuplot -d -c TEMPLATE.gp BASE ...` inside the
# report directory: BASE.dat in, BASE.png and BASE.svg out.
#
# Data files: one block per world size (blocks separated by two blank lines),
# rows "bytes value...", "?" where a series has no point at that size (the line
# is drawn across the gap rather than broken).
#
# Text arguments are gnuplot enhanced text, escaped by the report (gp_text in
# report.c): a '_' in a path name is "\_", so it is not a subscript.

set datafile missing "?"
set encoding utf8

# figures.gp, written by the report beside the templates, says whether the
# runs were simulated (tune_simulated = 1: the sim backend, no GPU).
tune_simulated = 0
load "figures.gp"

set border 3 lc rgb "#555555"
set tics nomirror out
set grid xtics ytics lw 1 lc rgb "#e5e5e5"
set key top left opaque box lc rgb "#cccccc" spacing 1.1 samplen 2 font ",9"

# One colour and marker per series position, the same in every figure.
set linetype 1 lc rgb "#1f77b4" lw 2 pt 7 ps 0.6
set linetype 2 lc rgb "#d62728" lw 2 pt 5 ps 0.6
set linetype 3 lc rgb "#555555" lw 2 pt 9 ps 0.7 dt 2
set linetype 4 lc rgb "#2ca02c" lw 2 pt 11 ps 0.7
set linetype 5 lc rgb "#9467bd" lw 2 pt 13 ps 0.7
set linetype 6 lc rgb "#ff7f0e" lw 2 pt 15 ps 0.7
set linetype 7 lc rgb "#8c564b" lw 2 pt 3 ps 0.7
set linetype 8 lc rgb "#17becf" lw 2 pt 1 ps 0.7
set linetype 9 lc rgb "#bcbd22" lw 2 pt 2 ps 0.7
set linetype cycle 9

# Bytes per rank on a log2 axis, labelled 1K, 4M, ... every factor of 4.
tune_size(x) = x >= 2**30 ? sprintf("%dG", x / 2**30) : x >= 2**20 ? sprintf("%dM", x / 2**20) : \
               x >= 2**10 ? sprintf("%dK", x / 2**10) : sprintf("%d", x)
# `eval tune_xtics_blank` keeps the tics but drops their labels (a panel
# with a ratio panel under it), `eval tune_xtics` puts them back.
set logscale x 2
tune_xtics = 'set xtics (); do for [e = 0:40:2] { set xtics add (tune_size(2**e) 2**e) }'
tune_xtics_blank = 'set xtics (); do for [e = 0:40:2] { set xtics add ("" 2**e) }'
eval tune_xtics
set xlabel "bytes per rank"

# tune_term(fmt, w, h): the `set terminal` command for "png" or "svg".
# pngcairo draws antialiased lines; the libgd png terminal is the fallback.
tune_png = strstrt(" " . GPVAL_TERMINALS . " ", " pngcairo ") > 0 ? \
           "pngcairo enhanced font 'sans,10'" : "png enhanced"
tune_term(fmt, w, h) = sprintf("set terminal %s size %d,%d", \
    fmt eq "png" ? tune_png : "svg dynamic enhanced font 'sans,10' background rgb 'white'", w, h)
tune_panel_w = 460
tune_panel_h = 400

# The figure title; simulated runs say so in it.
tune_title(t) = tune_simulated ? t . "  --  SIMULATED (sim backend, not GPU measurements)" : t
# `eval tune_sim_mark` in every panel, after any `unset label`: a simulated
# figure carries a SIMULATED watermark behind its curves.
tune_sim_mark = tune_simulated ? \
    'set label 90 "SIMULATED" at graph 0.5, 0.5 center rotate by 25 font ",30" tc rgb "#f4c2c2" back' : \
    'unset label 90'
