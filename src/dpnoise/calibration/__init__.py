"""Scale calibration helpers shared by mechanisms (pure math, no randomness)."""
