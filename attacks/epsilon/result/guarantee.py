"""The guarantee every ε estimate states (its ``guarantee`` string): what was certified, at which
level, and what is not promised.  One text per certification statement (:mod:`dpaudit.attacks.bounds`)."""

from __future__ import annotations

from ...bounds import RATE_RATIO, TWO_LIMITS

__all__ = ["GUARANTEE", "STATEMENTS", "guarantee_text"]

STATEMENTS = {
    TWO_LIMITS: (
        "for the selected event S and the dataset it favours (A, the other B), P[M(A) ∈ S] is at least its "
        "Clopper–Pearson lower limit at level α_p = {alpha_p:.3g} and P[M(B) ∈ S] at most its upper limit at "
        "α_q = {alpha_q:.3g}; α_p + α_q = α (union bound), and (ε, δ)-DP implies "
        "P[M(A) ∈ S] ≤ e^ε·P[M(B) ∈ S] + δ."),
    RATE_RATIO: (
        "for the selected event S and the dataset it favours (A, the other B), the numbers of releases of A "
        "and of B were drawn independently from Poisson(n) before sampling, so the counts in S are independent "
        "Poisson(n·p) and Poisson(n·q), p = P[M(A) ∈ S], q = P[M(B) ∈ S], and given their sum k the count of A "
        "is Bin(k, p/(p + q)); θ = p/(p + q) is at least its one-sided Clopper–Pearson lower limit θ_lo at "
        "level α, so p/q ≥ θ_lo/(1 − θ_lo), and ε-DP implies p ≤ e^ε·q."),
}

GUARANTEE = (
    "With probability at least {confidence:.4g} (α = {alpha:.3g}) the mechanism's true ε{unit} is at least "
    "ε_lb = {bound:.4g}, for the stated neighbour relation. One statement is certified on fresh samples: "
    "{statement} "
    "The pair (from {pairs} candidate(s), searched adaptively), the event, its direction, the statement, "
    "the split of α and the certification sample size were all chosen on selection samples independent of "
    "the certification sample, so the search takes no share of α. "
    "Not promised: this is a black-box test of the released values only — no side channels (timing, memory) "
    "or floating-point attacks; rare events can be missed, so 'no violation found' is not a proof of "
    "privacy; and ε_lb is never an upper bound on ε."
)


LOOKS = (
    "The certification was drawn in looks planned in advance ({completed} of {planned} drawn; the run stops at "
    "the first look whose bound exceeds the claim): look j certifies its own statement at level α_j, Σ α_j = α, "
    "so by the union bound every look's statement holds at once with probability at least {confidence:.4g} — "
    "whenever the run stopped — and the largest bound of the looks drawn is reported (this one at "
    "α_j = {alpha_look:.3g}). ")


def guarantee_text(confidence: float, bound: float, n_pairs: int, metric: bool, q_share: float = 0.5,
                   statement: str = TWO_LIMITS, looks: tuple[int, int, float] | None = None) -> str:
    """:data:`GUARANTEE` filled in for one estimate: ``statement`` is the one certified, ``q_share`` its
    split of α (two limits), ``n_pairs`` the candidates searched, ``metric`` whether ε is per unit distance,
    ``looks`` (completed, planned, α of the reported look) when the certification was drawn in looks."""
    alpha = 1.0 - confidence
    level = alpha if looks is None or looks[1] <= 1 else looks[2]
    text = STATEMENTS[statement].format(alpha_p=level * (1.0 - q_share), alpha_q=level * q_share)
    if looks is not None and looks[1] > 1:
        text = text.replace("α_p + α_q = α", "α_p + α_q = α_j").replace("at level α,", "at level α_j,")
        text += " " + LOOKS.format(completed=looks[0], planned=looks[1], confidence=confidence,
                                   alpha_look=looks[2]).rstrip()
    return GUARANTEE.format(confidence=confidence, alpha=alpha, bound=bound, pairs=n_pairs, statement=text,
                            unit=" (per unit distance)" if metric else "")
