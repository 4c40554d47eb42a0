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
        """The summed leaf values for each row (LightGBM's raw score)."""
        x = np.nan_to_num(np.asarray(features, dtype=np.float64), nan=0.0)
        rows, trees = np.arange(len(x))[:, None], np.arange(len(self.start))[None, :]
        node = np.tile(self.start, (len(x), 1))
        for _ in range(self.depth):
            inner = node >= 0
            if not inner.any():
                break
            at = np.where(inner, node, 0)
            go_left = x[rows, self.split[trees, at]] <= self.threshold[trees, at]
            node = np.where(inner, np.where(go_left, self.left[trees, at], self.right[trees, at]), node)
        scores: np.ndarray = self.leaves[trees, ~node].sum(axis=1)
        return scores
