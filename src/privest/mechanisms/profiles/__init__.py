"""What the statistic mechanisms read from the data: exact statistic values (as rationals,
for float-safe noise), reach profiles U_l, D_l (paper 002, Sec. 3.1) in floats and on a
public lattice, and the variance's reaches. Built on the samplers; the output laws and the
catalogue of mechanisms build on them."""
