"""Abstaining guesses for the one-run ε bound (Steinke, Nasr & Jagielski 2023, §5/§6).

Their auditor guesses "member" for the k₊ candidates with the highest scores,
"non-member" for the k₋ lowest, and abstains on the rest: confident guesses
are right more often, so r = k₊ + k₋ guesses can certify more than guessing
every candidate.  Theorem 3.1 allows this as long as the rule is fixed
without looking at the membership coins.  Here the *shares* k₊/n and k₋/n
are chosen on shadow calibration scores (:func:`choose_abstention`) and then
applied to the ranking of the target's scores (:func:`rank_guesses`), a
function of the release and the public candidate records only.  Ties keep the
candidates' order (a seeded shuffle independent of the coins).
"""

from __future__ import annotations

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

from ..bounds import epsilon_one_run

__all__ = ["FRACTIONS", "choose_abstention", "guess_counts", "rank_guesses"]

# Shares of the scored candidates guessed "member" (top) or "non-member" (bottom).
FRACTIONS: tuple[float, ...] = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)


def rank_guesses(scores: np.ndarray, top: float, bottom: float) -> np.ndarray:
    """1 (member) for the round(top·n) highest scores, 0 for the round(bottom·n) lowest, −1 otherwise."""
    if not (0.0 <= top <= 0.5 and 0.0 <= bottom <= 0.5):
        raise InvalidInputError(f"abstention shares must be in [0, 0.5], got {top}, {bottom}")
    scores = np.asarray(scores, dtype=np.float64).ravel()
    n = scores.size
    k_plus, k_minus = int(round(top * n)), int(round(bottom * n))
    order = np.argsort(scores, kind="stable")
    guess = np.full(n, -1, dtype=np.int64)
    guess[order[n - k_plus:]] = 1  # k_plus = 0: an empty slice
    guess[order[:k_minus]] = 0
    return guess


def guess_counts(guess: np.ndarray, membership: np.ndarray) -> tuple[int, int]:
    """(correct, guesses) of ``guess`` (−1 = abstain) against the membership truth."""
    made = guess >= 0
    return int(np.sum(guess[made] == np.asarray(membership)[made])), int(made.sum())


def choose_abstention(scores: np.ndarray, membership: np.ndarray, *, alpha: float) -> tuple[float, float]:
    """(top, bottom) shares from :data:`FRACTIONS` maximising the one-run bound on *calibration* data.

    The scores are sorted once; each pair of shares is then counted from prefix sums of the
    sorted membership (the same guesses as :func:`rank_guesses`, in O(1) per pair).
    """
    scores = np.asarray(scores, dtype=np.float64).ravel()
    truth = np.asarray(membership).ravel()
    n = scores.size
    members_below = np.concatenate([[0], np.cumsum(truth[np.argsort(scores, kind="stable")])])
    best: tuple[float, float, float] | None = None
    for top in FRACTIONS:
        for bottom in FRACTIONS:
            if top == bottom == 0.0:
                continue
            k_minus = int(round(bottom * n))
            first_top = max(n - int(round(top * n)), k_minus)  # rank_guesses: bottom wins an overlap
            right_top = int(members_below[n] - members_below[first_top])
            right_bottom = k_minus - int(members_below[k_minus])
            guesses = (n - first_top) + k_minus
            eps = epsilon_one_run(right_top + right_bottom, guesses, alpha=alpha)
            if best is None or eps > best[0]:
                best = (eps, top, bottom)
    if best is None:
        raise RuntimeError("FRACTIONS holds no abstention split")
    return best[1], best[2]
