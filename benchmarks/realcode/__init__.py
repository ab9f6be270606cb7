"""The real-code corpus: wrappers of DP code nobody here wrote, its catalogue, its page (bench_realcode.py)."""
