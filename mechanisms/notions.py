"""Privacy notions a claim can be stated in, each with the trade-off curve and privacy profile it implies.

Libraries state privacy in several notions: (ε, δ)-DP; ρ-zero-concentrated DP (Bun & Steinke 2016; OpenDP's
Gaussian and noisy-max measurements); μ-Gaussian DP (Dong, Roth & Su 2022, "Gaussian differential privacy",
JRSS-B); Rényi DP at orders α (Mironov 2017; Opacus, TF-Privacy); and a privacy profile, (ε, δ(ε)) rows as an
accountant prints them (dp-accounting).  Each notion here gives

* ``tradeoff(fpr)`` — its trade-off curve f (Dong, Roth & Su 2022, Def. 2.1): for any neighbours D, D′ and any
  test of "D′" against "D", the false-negative rate at false-positive rate x is at least f(x);
* ``profile(epsilon)`` — its privacy profile δ(ε): the mechanism is (ε, δ(ε))-DP for every ε;
* ``point_epsilon(delta)`` — the smallest ε with δ(ε) ≤ δ: the notion's (ε, δ) point;
* ``renyi(order)`` — its bound on the Rényi divergence D_α(P‖Q) of the outputs on neighbours (∞: none).

Every conversion goes through the libraries made for it, never a formula written here: the curves through
``riskcal`` (``get_beta_from_adp``, ``get_beta_from_gdp``, ``get_beta_from_zcdp``, ``get_beta_from_rdp``;
Kulynych, Gomez et al. 2024 — zCDP and RDP by the optimal RDP-to-f conversion of Zhu et al. 2022, App. F.1),
the profiles through ``dp-accounting`` (the analytic Gaussian privacy loss for GDP, Balle & Wang 2018; the
Canonne–Kamath–Steinke 2020 RDP-to-(ε, δ) conversion for zCDP and RDP, ``compute_delta``/``compute_epsilon``;
the PLD of (ε, δ)-DP, ``from_privacy_parameters``).  The Rényi bounds are the notions' definitions (zCDP:
ρ·α; GDP: α·μ²/2, Dong et al. 2022 Cor. 2.13 with Blackwell's theorem; pure ε-DP: min(ε, α·ε²/2), Bun &
Steinke 2016 Prop. 3.3; Rényi at stated orders: the smallest stated ε at an order ≥ α, as D_α grows with α,
van Erven & Harremoës 2014 Thm. 3).  Both libraries are imported when a curve is first asked for.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .validation import InvalidInputError

__all__ = ["NOTIONS", "ApproxDP", "GaussianDP", "Notion", "PrivacyProfile", "RenyiDP", "ZeroCDP", "notion_from_dict"]

# Orders of the Rényi divergence over which the zCDP and RDP profiles are optimised (dp-accounting's
# compute_delta/compute_epsilon take the best order of the grid): fine near 1, where small ρ is tightest.
RDP_ORDERS: tuple[float, ...] = tuple(float(a) for a in np.concatenate([
    1.0 + np.geomspace(1e-3, 1.0, 60), np.linspace(2.05, 16.0, 80), np.geomspace(16.5, 1024.0, 60)]))


def _finite_positive(value: Any, name: str, *, allow_zero: bool = False) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        raise InvalidInputError(f"{name} must be {'≥ 0' if allow_zero else '> 0'} and finite, got {value!r}")
    return number


def _probability(value: Any, name: str) -> float:
    number = _finite_positive(value, name, allow_zero=True)
    if number >= 1.0:
        raise InvalidInputError(f"{name} must be in [0, 1), got {value!r}")
    return number


def _rates(fpr: Any) -> np.ndarray:
    return np.clip(np.asarray(fpr, dtype=float), 0.0, 1.0)


def _epsilon_by_bisection(delta_of: Any, delta: float) -> float:
    """Smallest ε ≥ 0 with ``delta_of(ε)`` ≤ δ, for a profile whose library has no inverse (δ(ε) decreases)."""
    if float(delta_of(0.0)) <= delta:
        return 0.0
    hi = 1.0
    while float(delta_of(hi)) > delta:
        hi *= 2.0
        if hi > 1e4:
            return math.inf
    lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if float(delta_of(mid)) <= delta else (mid, hi)
    return hi


class Notion(ABC):
    """A privacy notion with its parameters: the curve, profile and Rényi bound it implies (module doc)."""

    kind: ClassVar[str]
    label: ClassVar[str]

    @abstractmethod
    def tradeoff(self, fpr: Any) -> np.ndarray:
        """f(x): the least false-negative rate any test may have at false-positive rate x."""

    @abstractmethod
    def profile(self, epsilon: Any) -> np.ndarray:
        """δ(ε): the mechanism is (ε, δ(ε))-DP."""

    @abstractmethod
    def renyi(self, order: float) -> float:
        """The notion's bound on D_α(P‖Q) at order α > 1 (∞ where it states none)."""

    @abstractmethod
    def parameters(self) -> str:
        """The parameters as a person writes them, e.g. ``ρ = 0.5``."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """JSON: ``{"notion": kind, ...parameters}`` (:func:`notion_from_dict` reads it back)."""

    def point_epsilon(self, delta: float) -> float:
        """The smallest ε with δ(ε) ≤ δ (the notion's (ε, δ) point).  At δ = 0 it is ∞: μ-GDP, ρ-zCDP and
        Rényi DP at finite orders imply no pure ε (δ(ε) > 0 at every finite ε, though it underflows in floats)."""
        if delta <= 0.0:
            return math.inf
        return _epsilon_by_bisection(lambda e: self.profile(e), delta)

    def renyi_text(self, order: float) -> str:
        """How the claimed Rényi bound at ``order`` is written in a conclusion (``ρ·α = 0.6``)."""
        return f"ε({order:g}) = {self.renyi(order):.3g}"

    def text(self) -> str:
        """``ρ = 0.5 (zCDP)``: the claim as the conclusions name it."""
        return f"{self.parameters()} ({self.label})"


@dataclass(frozen=True)
class ApproxDP(Notion):
    """(ε, δ)-DP: f(x) = max(0, 1 − δ − e^ε·x, e^(−ε)·(1 − δ − x)) (Dong, Roth & Su 2022, Prop. 2.5)."""

    epsilon: float
    delta: float = 0.0
    kind: ClassVar[str] = "approx-dp"
    label: ClassVar[str] = "(ε, δ)-DP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", _finite_positive(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta_", _probability(self.delta, "delta"))

    def tradeoff(self, fpr: Any) -> np.ndarray:
        from riskcal.analysis import get_beta_from_adp
        return np.asarray(get_beta_from_adp(self.epsilon, self.delta, _rates(fpr)), dtype=float)

    def _pld(self) -> Any:
        from dp_accounting.pld import common, privacy_loss_distribution
        return privacy_loss_distribution.from_privacy_parameters(
            common.DifferentialPrivacyParameters(self.epsilon, self.delta))

    def profile(self, epsilon: Any) -> np.ndarray:
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        out = np.asarray(self._pld().get_delta_for_epsilon(np.maximum(eps, 0.0)), dtype=float)
        return out.reshape(np.shape(epsilon))

    def point_epsilon(self, delta: float) -> float:
        return 0.0 if delta >= float(self.profile(0.0)) else float(self._pld().get_epsilon_for_delta(delta))

    def renyi(self, order: float) -> float:
        return min(self.epsilon, order * self.epsilon ** 2 / 2.0) if self.delta == 0.0 else math.inf

    def parameters(self) -> str:
        return f"ε = {self.epsilon:g}" if self.delta == 0.0 else f"(ε, δ) = ({self.epsilon:g}, {self.delta:g})"

    def to_dict(self) -> dict[str, Any]:
        return {"notion": self.kind, "epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class ZeroCDP(Notion):
    """ρ-zCDP (Bun & Steinke 2016): D_α(P‖Q) ≤ ρ·α at every order α > 1."""

    rho: float
    kind: ClassVar[str] = "zcdp"
    label: ClassVar[str] = "zCDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _finite_positive(self.rho, "rho"))

    def tradeoff(self, fpr: Any) -> np.ndarray:
        from riskcal.analysis import get_beta_from_zcdp
        return np.asarray(get_beta_from_zcdp(self.rho, np.atleast_1d(_rates(fpr))), dtype=float).reshape(np.shape(fpr))

    def profile(self, epsilon: Any) -> np.ndarray:
        from dp_accounting.rdp.rdp_privacy_accountant import compute_delta
        orders = np.asarray(RDP_ORDERS)
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        out = np.array([compute_delta(orders, self.rho * orders, float(e))[0] for e in eps])
        return out.reshape(np.shape(epsilon))

    def point_epsilon(self, delta: float) -> float:
        if delta <= 0.0:  # no pure ε (the base class's note)
            return math.inf
        from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon
        orders = np.asarray(RDP_ORDERS)
        return float(compute_epsilon(orders, self.rho * orders, delta)[0])

    def renyi(self, order: float) -> float:
        return self.rho * order

    def renyi_text(self, order: float) -> str:
        return f"ρ·α = {self.renyi(order):.3g}"

    def parameters(self) -> str:
        return f"ρ = {self.rho:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"notion": self.kind, "rho": self.rho}


@dataclass(frozen=True)
class GaussianDP(Notion):
    """μ-GDP (Dong, Roth & Su 2022, Def. 2.6): f(x) = Φ(Φ⁻¹(1 − x) − μ)."""

    mu: float
    kind: ClassVar[str] = "gdp"
    label: ClassVar[str] = "GDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _finite_positive(self.mu, "mu"))

    def tradeoff(self, fpr: Any) -> np.ndarray:
        from riskcal.analysis import get_beta_from_gdp
        return np.asarray(get_beta_from_gdp(self.mu, _rates(fpr)), dtype=float)

    def _loss(self) -> Any:
        from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss
        return GaussianPrivacyLoss(1.0 / self.mu, sensitivity=1.0)

    def profile(self, epsilon: Any) -> np.ndarray:
        eps = np.maximum(np.atleast_1d(np.asarray(epsilon, dtype=float)), 0.0)
        loss = self._loss()
        return np.array([loss.get_delta_for_epsilon(float(e)) for e in eps], dtype=float).reshape(np.shape(epsilon))

    def renyi(self, order: float) -> float:
        return order * self.mu ** 2 / 2.0

    def renyi_text(self, order: float) -> str:
        return f"α·μ²/2 = {self.renyi(order):.3g}"

    def parameters(self) -> str:
        return f"μ = {self.mu:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"notion": self.kind, "mu": self.mu}


@dataclass(frozen=True)
class RenyiDP(Notion):
    """Rényi DP at stated orders (Mironov 2017): D_α(P‖Q) ≤ ε(α) at each order α of ``orders``."""

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]
    kind: ClassVar[str] = "renyi"
    label: ClassVar[str] = "Rényi DP"

    def __post_init__(self) -> None:
        orders = tuple(_finite_positive(a, "a Rényi order") for a in self.orders)
        epsilons = tuple(_finite_positive(e, "a Rényi epsilon") for e in self.epsilons)
        if not orders or len(orders) != len(epsilons):
            raise InvalidInputError("a Rényi claim needs one epsilon per order, at least one order")
        if min(orders) <= 1.0:
            raise InvalidInputError(f"Rényi orders must be > 1, got {min(orders):g}")
        pairs = sorted(zip(orders, epsilons))
        object.__setattr__(self, "orders", tuple(a for a, _ in pairs))
        object.__setattr__(self, "epsilons", tuple(e for _, e in pairs))

    def tradeoff(self, fpr: Any) -> np.ndarray:
        from riskcal.analysis import get_beta_from_rdp
        x = np.atleast_1d(_rates(fpr))
        curves = [np.atleast_1d(get_beta_from_rdp(e, x, a)) for a, e in zip(self.orders, self.epsilons)]
        return np.max(np.asarray(curves, dtype=float), axis=0).reshape(np.shape(fpr))

    def profile(self, epsilon: Any) -> np.ndarray:
        from dp_accounting.rdp.rdp_privacy_accountant import compute_delta
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        out = np.array([compute_delta(self.orders, self.epsilons, float(e))[0] for e in eps])
        return out.reshape(np.shape(epsilon))

    def point_epsilon(self, delta: float) -> float:
        from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon
        return float(compute_epsilon(self.orders, self.epsilons, delta)[0])

    def renyi(self, order: float) -> float:
        stated = [e for a, e in zip(self.orders, self.epsilons) if a >= order]
        return min(stated) if stated else math.inf

    def parameters(self) -> str:
        return "ε(α) = " + ", ".join(f"{e:g} at α = {a:g}" for a, e in zip(self.orders, self.epsilons))

    def to_dict(self) -> dict[str, Any]:
        return {"notion": self.kind, "orders": list(self.orders), "epsilons": list(self.epsilons)}


@dataclass(frozen=True)
class PrivacyProfile(Notion):
    """A privacy profile: (ε_i, δ_i)-DP for every row i (an accountant's output).

    The curve is the largest the rows imply together, f = max_i f_{ε_i, δ_i} (each row's curve through
    riskcal); δ(ε) = min_i δ_i(ε), each row's own profile through dp-accounting's PLD of (ε_i, δ_i)-DP.
    """

    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]
    kind: ClassVar[str] = "profile"
    label: ClassVar[str] = "privacy profile"

    def __post_init__(self) -> None:
        if not self.epsilons or len(self.epsilons) != len(self.deltas):
            raise InvalidInputError("a privacy profile needs at least one (epsilon, delta) row")
        rows = sorted((_finite_positive(e, "a profile's epsilon", allow_zero=True), _probability(d, "a profile's delta"))
                      for e, d in zip(self.epsilons, self.deltas))
        object.__setattr__(self, "epsilons", tuple(e for e, _ in rows))
        object.__setattr__(self, "deltas", tuple(d for _, d in rows))

    @classmethod
    def from_pld(cls, pld: Any, epsilons: Any) -> PrivacyProfile:
        """The profile of a dp-accounting ``PrivacyLossDistribution`` at the ε of ``epsilons``."""
        eps = [float(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))]
        return cls(tuple(eps), tuple(float(d) for d in pld.get_delta_for_epsilon(eps)))

    def _rows(self) -> list[ApproxDP]:
        return [_RowDP(e, d) for e, d in zip(self.epsilons, self.deltas)]

    def tradeoff(self, fpr: Any) -> np.ndarray:
        return np.max(np.asarray([row.tradeoff(fpr) for row in self._rows()]), axis=0)

    def profile(self, epsilon: Any) -> np.ndarray:
        return np.min(np.asarray([row.profile(epsilon) for row in self._rows()]), axis=0)

    def renyi(self, order: float) -> float:
        return min(row.renyi(order) for row in self._rows())

    def parameters(self) -> str:
        rows = list(zip(self.epsilons, self.deltas))
        shown = ", ".join(f"({e:g}, {d:g})" for e, d in rows[:3])
        return f"(ε, δ) ∈ {{{shown}{', …' if len(rows) > 3 else ''}}} ({len(rows)} rows)"

    def to_dict(self) -> dict[str, Any]:
        return {"notion": self.kind, "epsilons": list(self.epsilons), "deltas": list(self.deltas)}


@dataclass(frozen=True)
class _RowDP(ApproxDP):
    """One row of a profile: (ε, δ)-DP where ε may be 0 (a row like (0, δ) is a valid statement)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", _finite_positive(self.epsilon, "epsilon", allow_zero=True))
        object.__setattr__(self, "delta_", _probability(self.delta, "delta"))


NOTIONS: dict[str, type[Notion]] = {cls.kind: cls for cls in (ApproxDP, ZeroCDP, GaussianDP, RenyiDP, PrivacyProfile)}


def notion_from_dict(data: dict[str, Any]) -> Notion:
    """The notion :meth:`Notion.to_dict` wrote."""
    kind = data.get("notion")
    if kind == "approx-dp":
        return ApproxDP(data["epsilon"], data.get("delta", 0.0))
    if kind == "zcdp":
        return ZeroCDP(data["rho"])
    if kind == "gdp":
        return GaussianDP(data["mu"])
    if kind == "renyi":
        return RenyiDP(tuple(data["orders"]), tuple(data["epsilons"]))
    if kind == "profile":
        return PrivacyProfile(tuple(data["epsilons"]), tuple(data["deltas"]))
    raise InvalidInputError(f"unknown privacy notion {kind!r}; known: {', '.join(NOTIONS)}")
