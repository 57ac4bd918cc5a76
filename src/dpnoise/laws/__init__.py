"""Calibration and exact laws of the truncated-and-normalised Laplace (paper 000): pure math."""
