"""Benchmarks (importable as a package so tests can reach the peers' catalogue)."""
