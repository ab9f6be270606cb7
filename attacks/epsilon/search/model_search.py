"""Model-based search over small whole datasets: a TPE optimiser proposes the pairs to try.

Optuna's TPE sampler (seeded) proposes datasets of up to
:data:`MAX_SEARCH_RECORDS` records around a centre anywhere in the public box,
with a spread from one point to the whole box, plus the canary (add-remove),
the new place of record 0 (replace) or the direction it moves in (metric);
each is scored by the bound its own selection sample predicts, and the
:data:`SEARCH_KEEP` best join the pair search's candidates with their samples.
Everything is seeded: the same seed proposes the same datasets.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..pairs.neighbours import NeighbourPair
from ..selection.candidate import Candidate, Sampler, evaluate
from ..selection.selection import EventSelector

__all__ = ["MAX_SEARCH_DIM", "MAX_SEARCH_RECORDS", "SEARCH_KEEP", "model_search"]

MAX_SEARCH_RECORDS = 10    # datasets proposed by the model-based search have 0–10 records
MAX_SEARCH_DIM = 16        # ... in at most this many dimensions
SEARCH_KEEP = 3            # searched datasets that join the candidates


def _trial_pair(trial: Any, number: int, relation: str, lo: np.ndarray, hi: np.ndarray, distance: float,
                offsets: np.ndarray) -> NeighbourPair:
    """The dataset pair a trial proposes: m records around a centre, with a spread, and the change.

    Records are ``centre + spread·(hi − lo)·offsets[i]/2`` clipped to the box,
    the offsets a fixed standard-normal draw per search, so a trial is 2d + 2
    numbers (m, centre, spread, and the canary / new place / direction) — few
    enough for TPE to model — and spreads from one point to the whole box.
    """
    d = len(lo)
    m = trial.suggest_int("m", 0 if relation == "add-remove" else 1, MAX_SEARCH_RECORDS)
    centre = np.array([trial.suggest_float(f"centre_{j}", float(lo[j]), float(hi[j])) for j in range(d)])
    spread = trial.suggest_float("spread", 0.0, 1.0)
    D = np.clip(centre + spread * (hi - lo) * offsets[:m] / 2.0, lo, hi)
    name, text = f"search{number}", f"model-based search (TPE), trial {number}: {m} record(s)"
    if relation == "add-remove":
        canary = np.array([trial.suggest_float(f"c_{j}", float(lo[j]), float(hi[j])) for j in range(d)])
        return NeighbourPair(name, D, np.vstack([D, canary[None, :]]), relation, m, canary, None,
                             description=text + " and a canary", family="search")
    if relation == "replace":
        new = np.array([trial.suggest_float(f"c_{j}", float(lo[j]), float(hi[j])) for j in range(d)])
        scale = 1.0
    else:
        u = np.array([trial.suggest_float(f"u_{j}", -1.0, 1.0) for j in range(d)])
        norm = float(np.linalg.norm(u))
        u = u / norm if norm > 1e-9 else np.eye(d)[0]
        new = D[0] + distance * u
        scale = distance
    Dp = D.copy()
    Dp[0] = new
    return NeighbourPair(name, D, Dp, relation, 0, new, D[0].copy(), distance if relation == "metric" else 1.0,
                         scale, text + "; record 0 changed", family="search")


def model_search(sampler: Sampler, kind: str, relation: str, lo: np.ndarray, hi: np.ndarray, distance: float,
                 *, trials: int, size: int, seed: int, first_id: int, select: EventSelector) -> list[Candidate]:
    """TPE over small whole datasets; the :data:`SEARCH_KEEP` best trials, as evaluated candidates."""
    if trials < 1 or len(lo) > MAX_SEARCH_DIM:
        return []
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(4, trials // 3)))
    offsets = np.random.default_rng(seed).standard_normal((MAX_SEARCH_RECORDS, len(lo)))
    found: list[Candidate] = []
    for number in range(trials):
        trial = study.ask()
        cand = Candidate(first_id + number, _trial_pair(trial, number, relation, lo, hi, distance, offsets))
        evaluate(cand, sampler, kind, size, (2, cand.id), select, competitors=trials)
        value = cand.rank[0] if cand.status == "ok" else -math.inf
        study.tell(trial, float(value) if math.isfinite(value) else -10.0)
        if cand.status == "ok":
            found.append(cand)
    found.sort(key=lambda c: c.rank, reverse=True)
    return found[:SEARCH_KEEP]
