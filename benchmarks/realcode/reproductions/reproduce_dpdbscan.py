"""DpDBSCAN (QiuTedYuan): the grid is anchored at the data's own minimum, as the repository's main.py builds it.

    python benchmarks/realcode/reproductions/reproduce_dpdbscan.py [--fits 2000] [--json PATH]

Run it in the interpreter the benchmark built for it (the repository's ``datatype_grid``, ``datatype_point``,
``histogram`` and ``noise`` importable).  ``main.py`` line 71 builds the grid from ``low, high =
pts.get_ranges()`` (the records' min and max; ``datatype_point.py`` itself notes "Point range should be an
input to avoid privacy leakage"), so the cells' edges sit at the data's minimum.  D = 50 records at
(0.25, 0.25): the grid is one cell, [0.25, 0.25 + w)² (w = α/√2 ≈ 0.141), and the only span is that cell.
D′ = D plus one record at (−1, −1): the grid starts at −1, the cell holding the 50 records is
[0.131, 0.273)², and it and its neighbours are core.  Event: the public point (0.2, 0.2) lies in a span —
never on D, in nearly every fit on D′.  Each fit runs ``main.py``'s DP-DBSCAN block as the benchmark's wrapper does
(``dpdbscan_plugins.main_py_spans``: Laplace noise, α = 0.2, MinPts = 7, grid scale 1, β = 0.5) with ``seed`` i (D) or
10⁶ + i (D′); claim ε = 1 under add/remove.
"""

import numpy as np
from one_pair import arguments, count, report, wrappers

CLAIM = 1.0
POINT = np.array([0.2, 0.2])
spans = wrappers("dpdbscan_plugins").main_py_spans


def covers(release):
    labels, grid = release
    cell = grid.get_grid_of_point(POINT)
    return grid.is_valid(cell) and grid.encode_as_key(cell) in labels


def main():
    args = arguments(__doc__, 2000)
    D = np.full((50, 2), 0.25)
    D2 = np.vstack([D, [[-1.0, -1.0]]])
    in_D, in_D2, seconds = count(lambda X, seed: spans(X, CLAIM, seed), D, D2, covers, args.fits)
    report(args.json, library="QiuTedYuan/DpDBSCAN (main.py's DP-DBSCAN)", relation="add-remove",
           D="50 records at (0.25, 0.25)", D_prime="D plus (-1, -1)", event="the point (0.2, 0.2) is in a span",
           favours="D'", fits=args.fits, in_D=in_D, in_D_prime=in_D2, delta=0.0, claim=CLAIM,
           line="main.py:71", line_text="low, high = pts.get_ranges()", seconds=seconds)


if __name__ == "__main__":
    main()
