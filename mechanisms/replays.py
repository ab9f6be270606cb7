"""Deterministic replays of built-in mechanisms' transcripts (issue 10): the registry.

The auditor knows both datasets of a pair.  Given a transcript's prefix (the
previous noisy centres, the released threshold, …) it can recompute the exact
statistic each draw perturbed, under D and under D′, and so the log-likelihood
ratio of every draw: ln f(y | D) − ln f(y | D′).  Summed over the draws this
is the transcript's privacy loss (when the replay is exact), whose threshold
events are the most powerful tests (Neyman–Pearson).

A replay is auditor-side code, written against the mechanism's documented
algorithm — never taken from the audited code.  Its output is a fixed function
of the release (same pair, same transcript ⇒ same numbers), so a threshold on
it is a valid event whatever its quality: a wrong or approximate replay only
weakens the test, it cannot make a bound unsound.  Approximations made here
are stated per replay (the random initial memberships of DP-FCM are not in the
transcript, so their first iteration is scored at the memberships' mean).

Each replay lives beside the mechanism it replays:

* :class:`DPKCCMReplay` (``dpkccm``) in :mod:`dpaudit.mechanisms.dpkccm_replay`;
* :class:`DPDBSCANReplay` (``dpdbscan``, ``dpdbscan-labels``) in :mod:`dpaudit.mechanisms.dpdbscan_replay`;
* :class:`DPFCMCorrectedReplay` (``dpfcm-corrected``) and :class:`DPFCMReplay` (``dpfcm``) in
  :mod:`dpaudit.mechanisms.dpfcm_replay`;
* :class:`DiffprivlibKMeansReplay` (``diffprivlib-kmeans``) in :mod:`dpaudit.mechanisms.diffprivlib_replay`.

What they share (:func:`laplace_llr` and the transcript helpers) is in
:mod:`dpaudit.mechanisms.likelihood` and re-exported here.  ``REPLAYS`` maps a
transcript's ``source`` to its replay; :func:`replay_for` looks one up.  Each
replay's :meth:`llr` returns named groups of per-release log-likelihood
ratios, shape (releases, columns).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol

import numpy as np

from .diffprivlib_replay import DiffprivlibKMeansReplay
from .dpdbscan_replay import DPDBSCANReplay
from .dpfcm_replay import DPFCMCorrectedReplay, DPFCMReplay
from .dpkccm_replay import DPKCCMReplay
from .likelihood import Batch, laplace_llr

__all__ = ["REPLAYS", "Replay", "laplace_llr", "replay_for"]


class Replay(Protocol):
    """Recomputes the exact statistics of a transcript under two hypothesised datasets.

    ``exact`` is True when the summed ratio is the transcript's exact privacy
    loss (no approximation), so ceilings may be simulated from it.
    """

    exact: bool

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]: ...


REPLAYS: dict[str, Callable[[Mapping[str, Any]], Replay]] = {
    "dpkccm": DPKCCMReplay,
    "dpdbscan": DPDBSCANReplay,
    "dpdbscan-labels": DPDBSCANReplay,
    "dpfcm-corrected": DPFCMCorrectedReplay,
    "dpfcm": DPFCMReplay,
    "diffprivlib-kmeans": DiffprivlibKMeansReplay,
}


def replay_for(source: str, config: Mapping[str, Any]) -> Replay | None:
    """The built-in replay for a transcript's ``source``, or None (plug-ins: generic features only)."""
    factory = REPLAYS.get(source)
    return None if factory is None else factory(config)
