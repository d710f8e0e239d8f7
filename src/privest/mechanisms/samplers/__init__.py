"""Exact samplers: discrete Laplace and Gaussian noise on public lattices, in machine and in
Python integers, so that no release betrays the low-order bits of a float (Mironov 2012;
Canonne, Kamath and Steinke 2020). The ground floor of the mechanisms: it reads no data."""
