"""What the learned reranker knows of a (query, paper) pair: the names of its features, in the model's order,
and the text features computed from the query's words and the paper's text data (:class:`DocText`, derived when
the paper was indexed). The retrieval features (scores and ranks) are computed by
:meth:`rag.retrieve.rerank.LearnedRanker.pool`, which puts both together.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from askpapers.vectorstore.features import DocText
from askpapers.vectorstore.text import STOPWORDS, content_stems, phrase_forms, stem
from askpapers.vectorstore.text import tokens as word_tokens

FEATURES = [
    # lexical: FTS5 bm25 over title and abstract, each alone, and their ranks in the pool
    "bm25", "bm25_title", "bm25_abs", "bm25_rel", "bm25_abs_rel", "bm25_title_rel", "log_lex_rank",
    "log_bm25_title_rank", "log_bm25_abs_rank", "phrase_bm25", "log_phrase_rank",
    # dense: best chunk, mean of the chunks, the paper vector, pseudo-relevance feedback
    "cos_best", "cos_mean", "cos_paper", "n_chunks", "cos_gap", "log_dense_rank", "log_cos_rank",
    "log_cos_mean_rank", "cos_prf", "cos_prf_gap", "log_prf_rank",
    # fusion
    "rrf", "log_fused_rank", "log_pool_rank",
    # text: query-word coverage of the best sentence and the whole text, n-grams, title, acronyms, the topic's phrases
    "cov_best_sent", "cov_best_sent_idf", "cov_doc", "cov_doc_idf", "bigram_hit", "trigram_hit", "title_cov",
    "title_bigram_hit", "acro_longform_hit", "q_acronym_in_doc", "topic_phrase_hit", "topic_phrase_in_title",
    "log_abs_len",
    # the query
    "q_n_terms", "q_idf_sum", "q_max_bm25", "q_max_cos", "q_has_phrases",
]  # fmt: skip
EMPTY_DOC = DocText("", "")  # the text data of a paper the BM25 index does not hold
N_TEXT = 13  # the text features, in order, from text_features()
_ALNUM = re.compile(r"[A-Za-z0-9]+")


class QueryText:
    """What the text features need from the query."""

    def __init__(self, text: str, phrases: Sequence[str], idf: dict[str, float]) -> None:
        self.terms = content_stems(text)
        self.want = frozenset(self.terms)
        self.padded = [(w, f" {w} ") for w in self.want]  # (each searched for in a paper's stems, blank-padded)
        toks = word_tokens(text)
        st = [stem(t) for t in toks]
        content = [t not in STOPWORDS and not (len(t) == 1 and not t.isdigit()) for t in toks]
        grams: dict[int, list[str]] = {2: [], 3: []}
        for n, out in grams.items():
            for i in range(len(toks) - n + 1):
                if content[i] and content[i + n - 1]:  # n-grams that start and end on a content word
                    out.append(" " + " ".join(st[i : i + n]) + " ")
        self.bigrams = list(dict.fromkeys(grams[2]))
        self.trigrams = list(dict.fromkeys(grams[3]))
        self.idf = {stem(t): idf.get(t, 0.0) for t in toks if t in idf}
        self.idf_sum = sum(self.idf.values()) or 1.0
        self.acros = {w.lower() for w in _ALNUM.findall(text) if sum(ch.isupper() for ch in w) >= 2}  # BERT, LoRA
        self.forms = phrase_forms(text)
        self.needles = [nd for p in phrases for nd in phrase_forms(p)]


def text_features(qt: QueryText, dt: DocText) -> list[float]:
    """The 13 text features of one (query, paper) pair."""
    want = qt.want
    n = max(len(want), 1)
    find = dt.forms.find
    end = dt.words_end
    found = [(w, pw) for w, pw in qt.padded if find(pw, 0, end) >= 0]
    got = want & frozenset(w for w, _ in found)
    idf = qt.idf
    best_sent, best_sent_idf = 0, 0.0
    for s, e in dt.segments if found else ():  # sentences can only cover what the whole text covers
        hit = [w for w, pw in found if find(pw, s, e) >= 0]
        if hit:
            best_sent = max(best_sent, len(hit))
            best_sent_idf = max(best_sent_idf, sum([idf.get(t, 0.0) for t in want & frozenset(hit)]))
    title = dt.title_segment
    in_title = sum(find(pw, *title) >= 0 for _, pw in qt.padded) if title is not None else 0
    forms = dt.forms
    bigrams, trigrams = qt.bigrams, qt.trigrams
    bi = sum(map(forms.__contains__, bigrams)) / len(bigrams) if bigrams else 0.0
    tri = sum(map(forms.__contains__, trigrams)) / len(trigrams) if trigrams else 0.0
    t_bi = sum(map(dt.title_forms.__contains__, bigrams)) / len(bigrams) if bigrams and dt.title_forms else 0.0
    # the paper defines an acronym the query uses, or a long form the query states
    acr = float(any(a in qt.acros or a.rstrip("s") in qt.acros or any(lf in f for f in qt.forms) for lf, a in dt.acro))
    upper = dt.upper if qt.acros else ""
    q_acr = sum(a.upper() in upper for a in qt.acros) / len(qt.acros) if qt.acros else 0.0
    ph = float(any(map(forms.__contains__, qt.needles))) if qt.needles else 0.0
    ph_t = float(any(map(dt.title_forms.__contains__, qt.needles))) if qt.needles and dt.title_forms else 0.0
    return [
        best_sent / n, best_sent_idf / qt.idf_sum, len(got) / n, sum([idf.get(t, 0.0) for t in got]) / qt.idf_sum,
        bi, tri, in_title / n, t_bi, acr, q_acr, ph, ph_t, math.log1p(dt.n_tok),
    ]  # fmt: skip
