"""A LightGBM model evaluated with numpy: the learned reranker's (:mod:`rag.retrieve.rerank`) and the membership
model's (:mod:`rag.decide.membership`), read from LightGBM's text format."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class Forest:
    """A LightGBM model (its text format) evaluated with numpy: the same scores as ``lightgbm.Booster.predict``
    (checked in the tests), without importing LightGBM and scikit-learn on the query path (about a second of
    start-up). Numerical splits only (``x <= threshold`` goes left), as the shipped model has."""

    def __init__(self, split: np.ndarray, threshold: np.ndarray, left: np.ndarray, right: np.ndarray,
                 leaves: np.ndarray, start: np.ndarray, depth: int) -> None:  # fmt: skip
        self.split, self.threshold, self.left, self.right = split, threshold, left, right
        self.leaves, self.start, self.depth = leaves, start, depth
        # The trees flattened into one node table: inner node n of tree t is t * inner + n; a child that is a leaf
        # is coded -1 - (its index in the flattened leaf values), so one array holds where every walk is.
        n_trees, inner = split.shape
        nodes = (np.arange(n_trees, dtype=np.int64) * inner)[:, None]
        first_leaf = (np.arange(n_trees, dtype=np.int64) * leaves.shape[1])[:, None]

        def flat(child: np.ndarray) -> np.ndarray:
            out: np.ndarray = np.where(child >= 0, nodes + child, -1 - (first_leaf + ~child)).ravel()
            return out

        self._feature, self._threshold = split.ravel(), threshold.ravel()
        self._left, self._right, self._leaf_values = flat(left), flat(right), leaves.ravel()
        self._start = np.where(start >= 0, nodes[:, 0] + start, -1 - first_leaf[:, 0])

    @classmethod
    def load(cls, path: Path) -> Forest:
        trees: list[dict[str, str]] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("Tree="):
                trees.append({})
            elif trees and "=" in line:
                key, _, value = line.partition("=")
                trees[-1][key] = value
        if not trees:
            raise ValueError(f"{path}: not a LightGBM model file (no trees)")
        inner = max(int(t["num_leaves"]) - 1 for t in trees) or 1
        n_leaves = max(int(t["num_leaves"]) for t in trees)
        shape = (len(trees), inner)
        split, left, right = np.zeros(shape, np.int64), np.full(shape, -1), np.full(shape, -1)
        threshold, leaves = np.zeros(shape), np.zeros((len(trees), n_leaves))
        start = np.zeros(len(trees), np.int64)
        for i, t in enumerate(trees):
            leaves[i, : int(t["num_leaves"])] = [float(v) for v in t["leaf_value"].split()]
            if int(t["num_leaves"]) == 1:
                start[i] = -1  # a single leaf
                continue
            if any(int(d) & ~2 for d in t["decision_type"].split()):  # categorical, or another missing-value rule
                raise ValueError(f"{path}: tree {i} has splits this reader does not evaluate")
            for name, arr, kind in (("split_feature", split, int), ("threshold", threshold, float),
                                    ("left_child", left, int), ("right_child", right, int)):  # fmt: skip
                values = [kind(v) for v in t[name].split()]
                arr[i, : len(values)] = values
        return cls(split, threshold, left, right, leaves, start, inner)

    def predict(self, features: np.ndarray) -> np.ndarray:
        """The summed leaf values for each row (LightGBM's raw score). Every (row, tree) walk moves down one level
        a step, and only the walks not yet at a leaf are stepped (the trees' depths differ: stepping every walk
        to the deepest tree's depth cost three times as much)."""
        x = np.nan_to_num(np.asarray(features, dtype=np.float64), nan=0.0)
        n_rows, n_trees = len(x), len(self._start)
        values = x.ravel()
        at = np.tile(self._start, n_rows)  # each walk's node (or leaf code), row by row
        row_start = np.repeat(np.arange(n_rows, dtype=np.int64) * (x.shape[1] if x.ndim == 2 else 0), n_trees)
        walking = np.flatnonzero(at >= 0)
        while walking.size:
            node = at[walking]
            go_left = values[row_start[walking] + self._feature[node]] <= self._threshold[node]
            step = np.where(go_left, self._left[node], self._right[node])
            at[walking] = step
            walking = walking[step >= 0]
        scores: np.ndarray = self._leaf_values[-1 - at].reshape(n_rows, n_trees).sum(axis=1)
        return scores
