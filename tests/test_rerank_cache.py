"""The reranker's per-paper data made faster without changing a feature: DocText built in one pass equals the
plain construction, and the features of the warmed (bulk) path equal those of the lazy path."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from rag.api import AskPapers
from rag.rerank import DocText
from tests.conftest import CORPUS
from vectorstore.parse import parse_paths
from vectorstore.text import acronym_definitions, phrase_forms, sentence_spans, stems
from vectorstore.text import tokens as word_tokens

PROPERTY = hyp_settings(deadline=None, max_examples=300, database=None, suppress_health_check=[HealthCheck.too_slow])


def reference_doc(title: str, abstract: str) -> dict[str, object]:
    """DocText's fields as first written (each field from the text helpers directly): the oracle."""
    sent_stems = [frozenset(stems(abstract[s:e])) for s, e in sentence_spans(abstract)]
    if title:
        sent_stems.append(frozenset(stems(title)))
    return {
        "sent_stems": sent_stems,
        "title_stems": frozenset(stems(title)) if title else frozenset(),
        "all_stems": frozenset().union(*sent_stems) if sent_stems else frozenset(),
        "forms": phrase_forms(f"{title}. {abstract}" if title else abstract),
        "title_forms": phrase_forms(title) if title else set(),
        "acro": [(" " + " ".join(stems(lf)) + " ", a.lower()) for lf, a in acronym_definitions(abstract)],
        "n_tok": len(word_tokens(abstract)),
        "upper": abstract.upper(),
    }


def fields(dt: DocText) -> dict[str, object]:
    out: dict[str, object] = {name: getattr(dt, name) for name in DocText.__slots__}
    for name in ("forms", "title_forms"):  # NUL-joined sets of forms (in the set's order)
        value = out[name]
        assert isinstance(value, str)
        out[name] = set(value.split("\0")) if value else set()
    return out


# Text that exercises the shortcuts: sentence ends and abbreviations, every kind of blank, hyphens that
# phrase_forms joins, case mappings that depend on context or change the length (final sigma, dotted I),
# acronym definitions, digits, underscores and punctuation.
PIECES = st.sampled_from(
    ["graph", "neural", "networks", "Networks", "(GNNs)", "(IB)", "information", "bottleneck", "state-of-the-art",
     "fine‐tuning", "pre‑trained", "e.g.", "et al.", "Fig.", "ΣΑΣ", "ΟΔΟΣ.", "İstanbul", "ǅ", "ﬁ", "x_1",
     "3.5", "U.S.", "LLMs", "LoRA", "-", "--", "(", ")", ".", "!", "?", '"', "'", "”", ";", "a", "of", "the", "A",
     "We", "1", "é", "ß", "\u0130", "\u03a3", "\u2010", "\u00ad"]
)  # fmt: skip
BLANKS = st.sampled_from([" ", "  ", "\n", "\t", " \n ", "", ". ", "? ", "! "])
TEXT = st.lists(st.tuples(PIECES, BLANKS), max_size=40).map(lambda parts: "".join(p + b for p, b in parts))


@PROPERTY
@given(title=TEXT, abstract=TEXT)
def test_doc_text_equals_the_reference_construction(title: str, abstract: str) -> None:
    assert fields(DocText(title, abstract)) == reference_doc(title, abstract)


def test_doc_text_equals_the_reference_on_the_bundled_papers() -> None:
    papers = parse_paths([CORPUS]).papers
    assert len(papers) == 38
    for p in papers:
        title = "" if p.title_derived else p.title
        assert fields(DocText(title, p.abstract)) == reference_doc(title, p.abstract), p.paper_id
        assert fields(DocText(p.title, p.abstract)) == reference_doc(p.title, p.abstract), p.paper_id


def test_stemming_from_several_threads_at_once() -> None:
    """The warm-up stems in a background thread while questions stem in theirs (and the web app answers several
    questions at once): the Snowball stemmer object keeps its state between calls, so concurrent calls must not
    share it unguarded (they raised IndexError or returned another word's stem)."""
    import threading

    from vectorstore.text import stem

    uncached = stem.__wrapped__  # (each call stems: no cache hits)
    words = sorted({w for p in parse_paths([CORPUS]).papers for w in word_tokens(p.abstract)})
    words += [w + suffix for w in words for suffix in ("ing", "ations", "ness", "ly")]
    expected = [uncached(w) for w in words]
    errors: list[BaseException] = []
    results: dict[int, list[str]] = {}

    def work(i: int) -> None:
        try:
            results[i] = [uncached(w) for w in words]
        except BaseException as e:  # (collected: asserted below)
            errors.append(e)

    for _ in range(3):
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[:3]
        assert all(r == expected for r in results.values())


def test_chunk_vectors_read_by_id_equal_those_read_by_metadata(app: AskPapers) -> None:
    store = app.index.store
    ids = [p.paper_id for p in app.papers()]
    res = store.chunks.get(where={"paper_id": {"$in": ids}}, include=["embeddings", "metadatas"])
    rows: dict[str, list[tuple[int, np.ndarray]]] = {}
    for e, m in zip(res["embeddings"], res["metadatas"], strict=True):
        rows.setdefault(str(m["paper_id"]), []).append((int(m["position"]), np.asarray(e, np.float32)))
    got = store.chunk_vectors(ids)
    assert set(got) == set(rows) == set(ids)
    for pid, r in rows.items():
        assert np.array_equal(got[pid], np.asarray([e for _, e in sorted(r, key=lambda x: x[0])]))
        assert len(got[pid]) == len(r)
    assert any(len(r) > 1 for r in rows.values())  # (papers with several chunks, in order)
