# fleet.gp: tune fleet's heatmap of one op, node x size. Run as
# `gnuplot -d -c fleet.gp BASE TITLE NSIZES NNODES` in the report folder:
# BASE.dat holds "size_index node ratio" rows (ratio: the node's median
# over the fleet median, the largest over the op's configurations at that
# size) and BASE_tics.gp the x tics (size labels); BASE.png comes out.
base = ARG1
set encoding utf8
term = strstrt(" " . GPVAL_TERMINALS . " ", " pngcairo ") > 0 ? "pngcairo font 'sans,9'" : "png"
eval sprintf("set terminal %s size 1000,%d", term, 200 + 14 * int(ARG4))
set output base . ".png"
set title ARG2 noenhanced
set xlabel "bytes per rank"
set ylabel "node"
set xrange [-0.5:int(ARG3) - 0.5]
set yrange [-0.5:int(ARG4) - 0.5]
set cblabel "median / fleet median"
# White at the fleet median, red where a node is slower, blue where faster.
set palette defined (0.8 "#2c7bb6", 1.0 "#ffffff", 1.1 "#fdae61", 1.3 "#d7191c")
set cbrange [0.8:1.3]
set tics out nomirror
set ytics 1
load base . "_tics.gp"
plot base . ".dat" using 1:2:3 with image notitle
