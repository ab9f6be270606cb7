"""A fitted random forest's trees as flat arrays, evaluated all at once (:class:`FlatForest`).

Label-only attacks query the target model thousands of times with a few rows each; scikit-learn dispatches
per tree, this evaluates every tree in max-depth vectorised steps.  :class:`dpaudit.attacks.targets.PointsTarget`
uses it for small queries.
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestClassifier

__all__ = ["FlatForest"]


class FlatForest:
    """A fitted RandomForestClassifier's trees as flat arrays, evaluated all at once.

    Same probabilities as ``RandomForestClassifier.predict_proba`` (the mean of
    each tree's leaf class frequencies; inputs compared as float32 like
    scikit-learn's trees), but a query is max_depth vectorised steps over
    (trees × records) instead of a dispatch per tree — label-only attacks make
    thousands of small queries.  Memory and time grow as trees × rows × depth,
    so :class:`PointsTarget` sends large queries to scikit-learn instead.
    """

    def __init__(self, forest: RandomForestClassifier) -> None:
        lefts, rights, feats, thr, vals, roots = [], [], [], [], [], []
        offset, depth = 0, 0
        for est in forest.estimators_:
            t = est.tree_
            idx = np.arange(t.node_count) + offset
            leaf = t.children_left == -1
            lefts.append(np.where(leaf, idx, t.children_left + offset))
            rights.append(np.where(leaf, idx, t.children_right + offset))
            feats.append(np.where(leaf, 0, t.feature))
            thr.append(t.threshold)
            v = t.value.reshape(t.node_count, -1)[:, :len(forest.classes_)]
            s = v.sum(axis=1, keepdims=True)
            vals.append(v / np.where(s == 0.0, 1.0, s))
            roots.append(offset)
            offset += t.node_count
            depth = max(depth, t.max_depth)
        self.left, self.right = np.concatenate(lefts), np.concatenate(rights)
        self.feature, self.threshold = np.concatenate(feats), np.concatenate(thr)
        self.value, self.roots, self.depth = np.vstack(vals), np.asarray(roots), depth

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        X32 = np.asarray(X, dtype=np.float32).astype(np.float64)
        rows = np.arange(len(X32))[None, :]
        node = np.repeat(self.roots[:, None], len(X32), axis=1)
        for _ in range(self.depth):  # leaves point to themselves
            go_left = X32[rows, self.feature[node]] <= self.threshold[node]
            node = np.where(go_left, self.left[node], self.right[node])
        return self.value[node].mean(axis=0)
