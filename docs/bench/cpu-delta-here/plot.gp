# Made by ssspd-bench from results.csv; run `gnuplot plot.gp` here to redraw.
set terminal pngcairo size 960,640 font 'Sans,10'
set grid
set key top left
set logscale x
set format x '10^{%L}'
set format y '%g'
set xlabel 'arcs in the graph'
set output 'time_vs_size.png'
set logscale y
set title 'One-to-all query time against graph size (median)'
set ylabel 'seconds per query'
plot 'time.dat' index 0 using 1:2 with linespoints lt 1 lw 2 pt 5 title 'Dijkstra (ssspd, CPU)', \
     'time.dat' index 1 using 1:2 with linespoints lt 2 lw 2 pt 6 title 'Δ-stepping (ssspd, CPU)', \
     'time.dat' index 2 using 1:2 with linespoints lt 3 lw 2 pt 7 title 'Boost Dijkstra', \
     'time.dat' index 3 using 1:2:3 with labels offset 0,-1 font ',8' notitle
set output 'speedup.png'
set logscale y
set title 'Speedup over the CPU Dijkstra (same run, same sources)'
set ylabel 'Dijkstra time / algorithm time'
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot 'speedup.dat' index 0 using 1:2 with linespoints lt 2 lw 2 pt 6 title 'Δ-stepping (ssspd, CPU)', \
     'speedup.dat' index 1 using 1:2 with linespoints lt 3 lw 2 pt 7 title 'Boost Dijkstra'
