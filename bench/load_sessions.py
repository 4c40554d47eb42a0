"""The load test's chat sessions: their conversations, the reference answers they are checked against, and the
isolation check itself."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.harness import log
from bench.load_clients import CLIENTS, ApiClient, Message, client_kind

START_TIMEOUT = 300.0  # seconds the sessions may take to connect their clients
# A follow-up read together with the question it narrows may also find papers the previous answer did not list; its
# answer then says so in these words (rag.answerers.extractive), and only then may it cite them.
BEYOND = "it did not list"

# One conversation per session: a "which papers" question on a topic of the bundled corpus (38 ICML 2026 abstracts),
# then two follow-ups, each narrowing the answer before it. The first 20 topics have pairwise different cited sets;
# every turn of every conversation cites at least one paper.
CONVERSATIONS: tuple[tuple[str, str, str], ...] = (
    ("Which papers use information bottleneck?", "Which of them use mutual information?",
     "Which of those are about graphs?"),
    ("Which papers are about federated learning?", "Which of those use sparse training?",
     "Which of them use the Fisher information matrix?"),
    ("Which papers study recommender systems?", "Which of them use contrastive learning?",
     "Which of those use mutual information?"),
    ("Which papers use reservoir computing?", "Which of those study scalability?", "Which of them use parallel?"),
    ("Which papers study contextual bandits?", "Which of them use regret?", "Which of those use phase transitions?"),
    ("Which papers use the Koopman operator?", "Which of those are about time series?", "Which of them use theory?"),
    ("Which papers are about machine unlearning?", "Which of them use mutual information?",
     "Which of those use transformers?"),
    ("Which papers study vision-language models?", "Which of them use reinforcement learning?",
     "Which of those use mutual information?"),
    ("Which papers use joint-embedding predictive architectures?", "Which of those are about collapse?",
     "Which of them use embeddings?"),
    ("Which papers use diffusion models?", "Which of those use mutual information?",
     "Which of them use classifier-free guidance?"),
    ("Which papers are about large language models?", "Which of them use reinforcement learning?",
     "Which of those use verifiable rewards?"),
    ("Which papers study time series forecasting?", "Which of them use transformers?",
     "Which of those use attention?"),
    ("Which papers use mutual information?", "Which of them use transformers?", "Which of those use diffusion models?"),
    ("Which papers use reinforcement learning?", "Which of those use KL divergence?",
     "Which of them use support mismatch?"),
    ("Which papers study fair allocation?", "Which of those are online?", "Which of them use envy-freeness?"),
    ("Which papers use mixture of experts?", "Which of them use large language models?",
     "Which of those are about collapse?"),
    ("Which papers are about interpretability?", "Which of them use representations?",
     "Which of those use time series?"),
    ("Which papers study hypergraphs?", "Which of those use graphs?", "Which of them use active learning?"),
    ("Which papers use clustering?", "Which of them use mutual information?", "Which of those use representations?"),
    ("Which papers use quantization?", "Which of those use transformers?", "Which of them use vector quantization?"),
    ("Which papers study hallucinations?", "Which of them use large language models?",
     "Which of those use knowledge?"),
    ("Which papers study single-cell transcriptomics?", "Which of them use embeddings?",
     "Which of those use geometry?"),
    ("Which papers study recurrent networks?", "Which of those use theory?", "Which of them use memory?"),
    ("Which papers are about multimodal large language models?", "Which of them use large language models?",
     "Which of those use visual encoders?"),
)  # fmt: skip

CitationKey = tuple[tuple[int, str, str, str], ...]


def ask(client: ApiClient, question: str, history: list[Message], timeout: float) -> dict[str, Any]:
    """One ``/ask`` request; raises unless it returns an answer and a citation list (and no error)."""
    result = client.call(question, history or None, timeout)
    if not isinstance(result, dict):
        raise RuntimeError(f"the API returned {type(result).__name__}, not a dict")
    if result.get("error"):
        raise RuntimeError(f"the API answered with an error: {result['error']}")
    if not isinstance(result.get("answer"), str) or not result["answer"].strip():
        raise RuntimeError("the API returned no answer text")
    if not isinstance(result.get("citations"), list):
        raise RuntimeError("the API returned no citation list")
    return result


def citation_key(result: dict[str, Any]) -> CitationKey:
    """What isolation compares: each citation's number, paper, title and evidence sentence (not its float score)."""
    return tuple(
        (int(c.get("n", 0)), str(c.get("paper_id", "")), str(c.get("title", "")), str(c.get("evidence", "")))
        for c in result["citations"]
    )


def paper_ids(key: CitationKey) -> set[str]:
    return {pid for _, pid, _, _ in key}


def short(key: CitationKey) -> str:
    return "[" + ", ".join(pid[:8] for _, pid, _, _ in key) + "]"


def reference_answers(
    url: str, conversations: Sequence[tuple[str, ...]], timeout: float, kind: str = "session"
) -> dict[tuple[int, int], CitationKey]:
    """Each turn of each conversation asked alone, one request at a time, with its conversation's history."""
    client = CLIENTS[client_kind(kind, 0)](url)
    refs: dict[tuple[int, int], CitationKey] = {}
    try:
        for ci, conversation in enumerate(conversations):
            history: list[Message] = []
            for ti, question in enumerate(conversation):
                result = ask(client, question, history, timeout)
                refs[(ci, ti)] = citation_key(result)
                if ti == 0 and not refs[(ci, ti)]:
                    log(f"warning: the reference answer to {question!r} cites no paper")
                history += [{"role": "user", "content": question}, {"role": "assistant", "content": result["answer"]}]
    finally:
        client.close()
    return refs


@dataclass
class Request:
    session: int
    turn: int
    start: float  # seconds since the load started
    seconds: float
    ok: bool
    server_seconds: float | None = None
    client: str = ""


@dataclass
class Recorder:
    """What the sessions report, under one lock."""

    requests: list[Request] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, request: Request, error: str | None = None, violations: Sequence[str] = ()) -> None:
        with self.lock:
            self.requests.append(request)
            if error is not None:
                self.errors.append(error)
            self.violations.extend(violations)

    def counts(self) -> tuple[int, int, int]:
        with self.lock:
            return len(self.requests), len(self.errors), len(self.violations)


def check_isolation(
    session: int, turn: int, question: str, result: dict[str, Any], key: CitationKey, reference: CitationKey,
    previous: set[str] | None,
) -> list[str]:  # fmt: skip
    where = f"session {session}, turn {turn + 1} ({question!r})"
    out = []
    if result.get("question") != question:
        out.append(f"{where}: the answer is to another question, {result.get('question')!r}")
    if key != reference:
        out.append(f"{where}: cited {short(key)}, but asked alone it cites {short(reference)}")
    beyond = BEYOND in str(result.get("answer", ""))  # (papers it says the previous answer did not list)
    if previous is not None and not beyond and not paper_ids(key) <= previous:
        extra = sorted(pid[:8] for pid in paper_ids(key) - previous)
        out.append(f"{where}: the follow-up cites papers its session's previous answer did not: {extra}")
    return out


@dataclass
class Session:
    index: int
    conversation_index: int
    url: str
    refs: dict[tuple[int, int], CitationKey]
    recorder: Recorder
    barrier: threading.Barrier
    clock: dict[str, float]  # "start" and "deadline", set by the barrier's action
    think: float
    timeout: float
    client_kind: str
    turns: int | None = None  # questions to ask, then stop; None: ask until the deadline

    @property
    def kind(self) -> str:
        return client_kind(self.client_kind, self.index)

    def run(self) -> None:
        client: ApiClient | None = None
        try:
            client = CLIENTS[self.kind](self.url)
        except Exception as e:
            self.recorder.add(Request(self.index, 0, 0.0, 0.0, False), f"session {self.index}: no client: {e!r}")
        try:
            self.barrier.wait(timeout=START_TIMEOUT)  # every session starts at once, when every client is ready
            if client is not None:
                self.converse(client)
        except threading.BrokenBarrierError:
            msg = f"session {self.index}: the sessions did not all start within {START_TIMEOUT:.0f} s"
            self.recorder.add(Request(self.index, 0, 0.0, 0.0, False), msg)
        finally:
            if client is not None:
                client.close()

    def converse(self, client: ApiClient) -> None:
        conversation = CONVERSATIONS[self.conversation_index]
        start, deadline = self.clock["start"], self.clock["deadline"]
        turn, previous = 0, None
        history: list[Message] = []
        asked = 0
        while asked < self.turns if self.turns is not None else time.perf_counter() < deadline:
            asked += 1
            question = conversation[turn]
            t = time.perf_counter()
            try:
                result = ask(client, question, history, self.timeout)
            except Exception as e:
                elapsed = time.perf_counter() - t
                msg = f"session {self.index}, turn {turn + 1}: {type(e).__name__}: {e}".strip()
                self.recorder.add(Request(self.index, turn, t - start, elapsed, False, None, self.kind), msg)
                turn, history, previous = 0, [], None  # start the conversation over
                time.sleep(0.5)
                continue
            elapsed = time.perf_counter() - t
            key = citation_key(result)
            problems = check_isolation(
                self.index, turn, question, result, key, self.refs[(self.conversation_index, turn)], previous
            )
            server = result.get("latency_s")
            server_s = float(server) if isinstance(server, int | float) else None
            request = Request(self.index, turn, t - start, elapsed, True, server_s, self.kind)
            self.recorder.add(request, None, problems)
            history = [
                *history,
                {"role": "user", "content": question},
                {"role": "assistant", "content": result["answer"]},
            ]
            previous = paper_ids(key)
            turn += 1
            if turn == len(conversation):
                turn, history, previous = 0, [], None
            if self.think:
                time.sleep(self.think)
