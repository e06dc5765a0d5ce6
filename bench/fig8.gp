# gnuplot script written by shapematch bench fig8
set terminal pngcairo size 900,700 font ',11'
set output 'bench/fig8.png'
set datafile separator ','
set logscale xy
set grid
set key top left font ',9' spacing 0.9
set xrange [700:1.5e6]
set xlabel 'number of points'
set ylabel 'time per step (ms)'
set title 'shapematch: the paper''s Fig. 8 (random points pulled toward random goals)'
series(b, v, m, c) = sprintf('%s %s %s, %d cluster%s', b, v, m, c, c > 1 ? 's' : '')
plot for [b in 'cpu opencl'] for [m in 'linear quadratic'] for [c in '1 8 64'] 'bench/fig8.csv' \
     using (strcol(1) eq b && strcol(3) eq 'one' && strcol(4) eq m && $5 == c ? $6 : NaN):7 \
     with linespoints title series(b, 'one object', m, c+0), \
  for [b in 'cpu opencl'] 'bench/fig8.csv' using (strcol(1) eq b && strcol(3) eq 'many' ? $6 : NaN):7 \
     with linespoints dashtype 2 title series(b, 'objects of 1000 points', 'linear', 8)
