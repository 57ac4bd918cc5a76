"""The maths of each noise family: densities, lattice laws, calibration.  No randomness.

    base                  the shared law interface (Law, TableLaw, LatticeLaw): scipy.stats style
    half_lattice          the half-offset lattice law shared by the Laplace-type families
    block_calibration     the shared default grid and block length M of the lattice Laplace
    range_laplace         range-adherent (truncated and normalised) Laplace: scales
    range_laplace_law     ... and its exact law
    truncated_laplacian   truncated Laplacian (ε, δ) parameters and lower bounds
    count_noise           finite-support count noise: the family and its exact δ
    discrete_gaussian     discrete Gaussian accounting (exact δ(ε))
    staircase             staircase densities, optimal parameters, lattice calibration
    finite_precision      ε' of noise rounded to a grid on real floats

Names match :mod:`dpnoise.reproduce` and ``docs/``.  The power-of-two grids themselves are
:mod:`dpnoise.grid` (the ground floor: the exact samplers use them too).  Samplers live in
:mod:`dpnoise.exact`, mechanisms (calibrated with these laws) in :mod:`dpnoise.mechanisms`.
"""
