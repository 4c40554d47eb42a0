"""Requests, tokens and cost of one answer, counted by a LangChain callback (imported only with a model)."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.callbacks import UsageMetadataCallbackHandler

from askpapers.rag.settings import LLMSettings


class Meter(UsageMetadataCallbackHandler):
    """Requests, tokens and their estimated cost over every step of one answer (thread-safe: batches run in
    threads)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0
        self._count = threading.Lock()

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        with self._count:
            self.requests += 1

    def usage(self) -> dict[str, int]:
        total = {"requests": self.requests, "input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        for u in self.usage_metadata.values():
            for key in ("input_tokens", "output_tokens", "total_tokens"):
                total[key] += int(u.get(key, 0) or 0)  # type: ignore[call-overload]
        return total

    def cost(self, s: LLMSettings) -> float | None:
        if s.price_in is None and s.price_out is None:
            return None
        u = self.usage()
        return round((u["input_tokens"] * (s.price_in or 0) + u["output_tokens"] * (s.price_out or 0)) / 1e6, 6)
