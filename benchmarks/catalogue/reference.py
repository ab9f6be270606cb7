"""The peers' published numbers for the catalogue.

Source: DP-Sniper's repository (``eth-sri/dp-sniper``), directory
``eval_sp2021/reference-results/`` — the logs behind the S&P 2021 paper's
evaluation:

* ``dd_search_reg_data.log`` (logistic regression) and
  ``dd_search_mlp_data.log`` (MLP): ``eps_lcb``, DP-Sniper's ε lower bound
  at 90 % confidence (Clopper–Pearson on 2·10⁸ fresh samples), and the time
  ``time_dd_search`` + ``time_final_estimate_eps`` in seconds, on the authors'
  machine with every core in use (not comparable with 2 cores);
* ``statdp_1_data.log``: StatDP (Ding et al., CCS 2018) run by the DP-Sniper
  authors, its counterexample then verified on fresh samples (``eps_lcb``
  of ``statdp_result``, 90 %).  NumericalSVT has no StatDP result there.

All mechanisms at ε = 0.1 (LaplaceParallel: 20 × 0.005).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PeerResult", "PEERS"]


@dataclass(frozen=True)
class PeerResult:
    dpsniper_lr: float          # ε_lb, 90 %, logistic regression
    dpsniper_mlp: float         # ε_lb, 90 %, MLP
    dpsniper_lr_seconds: float  # search + final estimate, authors' machine
    dpsniper_pair: str          # the input pair its logistic-regression run chose (a1 vs a2)
    statdp: float | None        # StatDP's verified ε_lb, 90 %

    @property
    def dpsniper_best(self) -> float:
        return max(self.dpsniper_lr, self.dpsniper_mlp)


PEERS: dict[str, PeerResult] = {
    "LaplaceMechanism": PeerResult(0.09680, 0.09763, 19.6 + 1.9, "[1] vs [2]", 0.09981),
    "TruncatedGeometric": PeerResult(0.11556, 0.11554, 17.9 + 1.5, "[2] vs [1]", 0.11588),
    "NoisyHist1": PeerResult(0.09779, 0.09770, 34.8 + 2.9, "[0 1 1 1 1] vs [1 1 1 1 1]", 0.08283),
    "NoisyHist2": PeerResult(4.60202, 4.60147, 37.8 + 2.8, "[0 1 1 1 1] vs [1 1 1 1 1]", 9.71693),
    "ReportNoisyMax1": PeerResult(0.09225, 0.09250, 58.8 + 3.0, "[1 1 1 1 1] vs [0 2 2 2 2]", 0.09195),
    "ReportNoisyMax2": PeerResult(0.09750, 0.09792, 55.7 + 2.7, "[1 1 1 1 1] vs [0 2 2 2 2]", 0.09958),
    "ReportNoisyMax3": PeerResult(0.24782, 0.24881, 59.4 + 3.0, "[0 0 0 0 0] vs [1 1 1 1 1]", 0.19914),
    "ReportNoisyMax4": PeerResult(0.34634, 0.35344, 59.8 + 3.1, "[1 1 1 1 1] vs [2 2 2 2 2]", 0.19602),
    "SparseVectorTechnique1": PeerResult(0.08580, 0.08578, 118.0 + 8.0, "[0]*5+[1]*5 vs [1]*5+[0]*5", 0.02975),
    "SparseVectorTechnique2": PeerResult(0.08593, 0.08525, 148.1 + 11.8, "[0]*5+[1]*5 vs [1]*5+[0]*5", 0.03164),
    "SparseVectorTechnique3": PeerResult(0.17157, 0.18217, 149.8 + 10.5, "[1]*10 vs [2]*5+[0]*5", 0.02306),
    "SparseVectorTechnique4": PeerResult(0.16868, 0.16957, 122.7 + 7.8, "[1]*10 vs [2]*5+[0]*5", 0.17086),
    "SparseVectorTechnique5": PeerResult(1.76119, 1.76099, 56.2 + 2.6, "[2]*5+[0]*5 vs [1]*10", 14.31431),
    "SparseVectorTechnique6": PeerResult(0.27204, 0.26983, 90.7 + 4.8, "[1]*5+[0]*5 vs [0]*5+[1]*5", 0.32204),
    "Rappor": PeerResult(0.29298, 0.30080, 130.6 + 14.2, "[1] vs [0]", 0.24158),
    "OneTimeRappor": PeerResult(0.59778, 0.59990, 79.9 + 9.2, "[1] vs [0]", 0.47064),
    "LaplaceParallel": PeerResult(0.03495, 0.02987, 96.5 + 8.0, "[1] vs [0]", 0.01259),
    "SVT34Parallel": PeerResult(0.26104, 0.26162, 341.3 + 22.7, "[1]*10 vs [2]*5+[0]*5", 0.13709),
    "PrefixSum": PeerResult(0.50401, 0.57743, 92.1 + 4.8, "[1]*10 vs [0]*10", 0.35161),
    "NumericalSVT": PeerResult(0.03432, 0.03450, 142.2 + 9.5, "[2]*10 vs [1]*10", None),
}
