"""The ONNX embedder: normalised vectors, dynamic padding, checked model file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from askpapers.vectorstore.embed import DIM, Embedder
from askpapers.vectorstore.errors import StoreError


def test_vectors_are_normalised_and_meaningful(embedder) -> None:  # type: ignore[no-untyped-def]
    v = embedder.embed(
        ["information bottleneck", "The information bottleneck compresses representations.", "a recipe for soup"]
    )
    assert v.shape == (3, DIM)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3


def test_padding_is_dynamic(embedder, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    shapes: list[tuple[int, ...]] = []
    real_run = embedder._session.run

    def spy(names, feeds):  # type: ignore[no-untyped-def]
        shapes.append(feeds["input_ids"].shape)
        return real_run(names, feeds)

    monkeypatch.setattr(embedder._session, "run", spy)
    embedder.embed_query("short query")
    assert shapes[-1] == (1, 4)  # [CLS] short query [SEP], not 256
    batch_vec = embedder.embed(["one", "a somewhat longer text than one"])
    assert max(s[1] for s in shapes[1:]) < 16
    solo = embedder.embed(["one"])
    assert np.allclose(batch_vec[0], solo[0], atol=1e-4), "padding must not change a text's vector"


def test_model_checksum_is_verified(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(StoreError, match="sha256"):
        Embedder(model_path=fake)
