"""Third-party DP k-means code and the harness-side pieces of ``benchmarks/bench_thirdparty.py``.

``functions.py`` (the audited code), ``witnesses.py`` and ``repro_diffprivlib.py`` run in the third
party's own interpreter and import nothing of dpaudit; ``catalogue.py`` and ``page.py`` are the
harness's.
"""
