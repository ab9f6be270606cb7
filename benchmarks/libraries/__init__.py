"""The library panel (``benchmarks/bench_libraries.py``): DP libraries from the registries, audited as shipped.

``diffprivlib_plugins.py`` and ``opendp_plugins.py`` are the audited code — plain plug-ins a user would
write, importing only numpy and the library — and run in the library's own virtual environment;
``catalogue.py`` (the rows: claim, options, why the release should or should not hold its claim),
``finding_texts.py`` (why each finding is one, and the library line behind it) and ``page.py`` (the results
page) are the harness's.  The reproductions of every violation are in
``benchmarks/reproductions/`` and import numpy, scipy and the library only.
"""
