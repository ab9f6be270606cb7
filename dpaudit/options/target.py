"""The code a run audits and how it is fed: :class:`TargetOptions`.

Where it runs is the execution layer's :class:`~dpaudit.execution.Isolation`; the two, with the claim's
neighbour relation and δ (what a plug-in function cannot state itself), make the
:class:`~dpaudit.execution.MechanismRecipe` every call goes through (:meth:`TargetOptions.recipe`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dpaudit.execution import Isolation, MechanismRecipe
from dpaudit.mechanisms.base import InvalidInputError

from .checks import OptionError

if TYPE_CHECKING:
    from dpaudit.data.datasets import Dataset
    from dpaudit.mechanisms.supervised import Supervision

    from .claim import ClaimOptions

__all__ = ["TargetOptions"]


@dataclass(frozen=True, kw_only=True)
class TargetOptions:
    """The audited code: its ``mechanism`` spec (a registered name, ``module:attr`` or ``file.py:attr``), its
    constructor ``params`` besides ε, how a plug-in function's return value is read (``output``: points,
    centroids, labels, vector; a supervised estimator class's: parameters or predictions) and whether it
    draws its ``own_randomness`` (stated: no replay probe).  A supervised plug-in's labels: the stated
    ``classes`` or a regression target's ``label_range`` (else the data's labels give the classes), one
    public record per class in every dataset (``label_anchors``), and the
    :class:`~dpaudit.mechanisms.supervised.Supervision` a run builds from them and its data
    (:meth:`with_supervision`; None until then, or for data without labels)."""

    mechanism: str
    params: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    own_randomness: bool = False
    classes: tuple[float, ...] | None = None
    label_range: tuple[float, float] | None = None
    label_anchors: bool = True
    supervision: Supervision | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, str) or not self.mechanism.strip():
            raise OptionError("mechanism", f"mechanism must name the audited code, got {self.mechanism!r}")
        if self.output is not None:
            from dpaudit.mechanisms.plugins import check_output

            try:
                check_output(self.output)
            except InvalidInputError as exc:
                raise OptionError("output", str(exc)) from None
        if self.classes is not None:
            object.__setattr__(self, "classes", tuple(float(c) for c in self.classes))
        if self.label_range is not None:
            lo, hi = (float(v) for v in self.label_range)
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise OptionError("label_range", f"label_range takes LO,HI with LO < HI, got {self.label_range!r}")
            object.__setattr__(self, "label_range", (lo, hi))
        object.__setattr__(self, "label_anchors", bool(self.label_anchors))

    def with_supervision(self, data: Dataset, bounds: Any = None) -> TargetOptions:
        """These options with the :class:`~dpaudit.mechanisms.supervised.Supervision` ``data`` gives them
        (:func:`dpaudit.data.labels.supervision_for`; ``bounds``: the stated feature box)."""
        from dpaudit.data.labels import supervision_for

        return dataclasses.replace(self, supervision=supervision_for(
            data, classes=self.classes, label_range=self.label_range, label_anchors=self.label_anchors,
            bounds=bounds))

    def recipe(self, claim: ClaimOptions, isolation: Isolation, params: dict[str, Any] | None = None
               ) -> MechanismRecipe:
        """The mechanism with ``params`` (None: these options'), the claim's neighbour relation and δ for a
        plug-in that cannot state them, and where it runs (built-ins in this process unless ``isolation``
        names another interpreter)."""
        return MechanismRecipe(self.mechanism, dict(self.params if params is None else params), output=self.output,
                               neighbours=claim.neighbours, delta=claim.delta, isolation=isolation,
                               supervision=self.supervision, own_randomness=self.own_randomness)
