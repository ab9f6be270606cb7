"""Attacks on releases, and the empirical ε-estimation harness."""
