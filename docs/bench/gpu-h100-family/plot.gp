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
     'time.dat' index 1 using 1:2 with linespoints lt 11 lw 2 pt 15 title 'Boost Dijkstra', \
     'time.dat' index 2 using 1:2 with linespoints lt 12 lw 2 pt 16 title 'Boost Bellman-Ford', \
     'time.dat' index 3 using 1:2 with linespoints lt 5 lw 2 pt 9 title 'GPU Δ-stepping', \
     'time.dat' index 4 using 1:2 with linespoints lt 6 lw 2 pt 10 title 'GPU Bellman-Ford', \
     'time.dat' index 5 using 1:2 with linespoints lt 7 lw 2 pt 11 title 'GPU ELL Bellman-Ford', \
     'time.dat' index 6 using 1:2 with linespoints lt 8 lw 2 pt 12 title 'GPU queue Bellman-Ford', \
     'time.dat' index 7 using 1:2 with linespoints lt 9 lw 2 pt 13 title 'GPU Dijkstra', \
     'time.dat' index 8 using 1:2 with linespoints lt 10 lw 2 pt 14 title 'GPU edge-list Bellman-Ford', \
     'time.dat' index 9 using 1:2:3 with labels offset 0,-1 font ',8' notitle
set output 'speedup.png'
set logscale y
set title 'Speedup over the CPU Dijkstra (same run, same sources)'
set ylabel 'Dijkstra time / algorithm time'
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot 'speedup.dat' index 0 using 1:2 with linespoints lt 11 lw 2 pt 15 title 'Boost Dijkstra', \
     'speedup.dat' index 1 using 1:2 with linespoints lt 12 lw 2 pt 16 title 'Boost Bellman-Ford', \
     'speedup.dat' index 2 using 1:2 with linespoints lt 5 lw 2 pt 9 title 'GPU Δ-stepping', \
     'speedup.dat' index 3 using 1:2 with linespoints lt 6 lw 2 pt 10 title 'GPU Bellman-Ford', \
     'speedup.dat' index 4 using 1:2 with linespoints lt 7 lw 2 pt 11 title 'GPU ELL Bellman-Ford', \
     'speedup.dat' index 5 using 1:2 with linespoints lt 8 lw 2 pt 12 title 'GPU queue Bellman-Ford', \
     'speedup.dat' index 6 using 1:2 with linespoints lt 9 lw 2 pt 13 title 'GPU Dijkstra', \
     'speedup.dat' index 7 using 1:2 with linespoints lt 10 lw 2 pt 14 title 'GPU edge-list Bellman-Ford'
