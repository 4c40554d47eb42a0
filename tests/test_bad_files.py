"""Bad corpus files, end to end: each file is ingested correctly or rejected with a message naming the file (and
its line), never half-ingested silently, and the store is never left inconsistent.

"Consistent" (see :func:`snapshot_of`): the chunks collection holds exactly the chunks ``{paper_id}:{i}``,
``i < n_chunks``, of the papers the papers collection holds. After a rejected ingest the snapshot is unchanged.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.errors import InputError
from askpapers.vectorstore.formats import MAX_FIELD
from askpapers.vectorstore.parse import abstract_key, parse_file, parse_paths, short_hash
from askpapers.vectorstore.pipeline import ingest
from askpapers.vectorstore.records import StoredPaper
from askpapers.vectorstore.store import Store
from askpapers.vectorstore.text import normalise, one_line
from askpapers.vectorstore.titles import MAX_TITLE, derive_title, unique_titles
from tests.conftest import CORPUS

ASKPAPERS = Path(sys.executable).parent / "askpapers"

A1 = "We propose a sparse attention mechanism for long documents. It scales linearly with length."
A2 = "Large language models often hallucinate facts. We study why this happens during pre-training."
A3 = "Graph neural networks struggle with heterophily. We introduce a simple rewiring step."
A4 = "Diffusion samplers are slow at inference time. We distil them into a one-step student."
SEED = [
    {"id": "seed-1", "title": "Kernel Methods at Scale", "abstract": "We scale kernel ridge regression to billions."},
    {"id": "seed-2", "abstract": "Bandit algorithms with paid observations. We prove a regret bound."},
    {"id": "seed-3", "abstract": "Optimal transport between point clouds. Our solver is fast."},
]

Snapshot = tuple[dict[str, StoredPaper], list[str]]


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    return write(path, "".join(json.dumps(r) + "\n" for r in records))


def snapshot_of(store: Store) -> Snapshot:
    """The store's papers and chunk ids, after checking that every chunk belongs to a stored paper and back."""
    stored = store.stored()
    chunk_ids = sorted(store.chunks.get(include=[])["ids"])
    assert store.count() == len(stored)
    orphans = [c for c in chunk_ids if c.rpartition(":")[0] not in stored]
    assert not orphans, f"chunks without a paper record: {orphans}"
    assert chunk_ids == sorted(f"{pid}:{i}" for pid, s in stored.items() for i in range(s.n_chunks))
    return stored, chunk_ids


def snapshot(settings: Any, embedder: Any) -> Snapshot:
    return snapshot_of(Store(settings.store, embedder.embedder_id, embedder.dim))


def seed(tmp_path: Path, settings: Any, embedder: Any) -> Snapshot:
    f = jsonl(tmp_path / "seed" / "seed.jsonl", SEED)
    report = ingest([f], settings.store, progress=False, embedder=embedder)
    assert (report.added, report.skipped, report.total_papers) == (3, 0, 3)
    before = snapshot(settings, embedder)
    assert len(before[0]) == 3
    return before


def rejected(paths: list[Path], settings: Any, embedder: Any, before: Snapshot, **kwargs: Any) -> str:
    """Ingest ``paths``, expecting an InputError; check the store did not change; return the message."""
    with pytest.raises(InputError) as exc:
        ingest(paths, settings.store, progress=False, embedder=embedder, **kwargs)
    message = str(exc.value)
    assert "\n" not in message and message.strip() == message
    assert snapshot(settings, embedder) == before
    return message


# --- empty and binary files ----------------------------------------------------------------------------


def test_empty_files_are_rejected_naming_the_file(tmp_path: Path, fresh_settings: Any, embedder: Any) -> None:
    before = seed(tmp_path, fresh_settings, embedder)
    good = jsonl(tmp_path / "good.jsonl", [{"id": "g", "abstract": A1}])
    contents = {"zero": b"", "blank": b"  \n\r\n\t\n\n", "bom": b"\xef\xbb\xbf", "bom-blank": b"\xef\xbb\xbf\r\n \r\n"}
    for suffix in (".txt", ".jsonl", ".json", ".csv"):
        for name, data in contents.items():
            f = write(tmp_path / f"{name}{suffix}", data)
            assert rejected([good, f], fresh_settings, embedder, before) == f"{f}: the file is empty"
    # nothing of the good file was written either: the whole ingest is refused before any write
    assert "g" not in snapshot(fresh_settings, embedder)[0]


def test_binary_files_are_rejected_naming_the_file(tmp_path: Path, fresh_settings: Any, embedder: Any) -> None:
    before = seed(tmp_path, fresh_settings, embedder)
    rng = random.Random(1234)
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" + rng.randbytes(2000)
    binary = {
        "image.txt": png,
        "random.jsonl": rng.randbytes(4096) + b"\x00",
        "utf16.csv": "id,abstract\n1,We study graphs.\n".encode("utf-16"),
        # text first, a NUL after 8 KB: once half-read (the check looked at the first 8 KB only)
        "late-nul.txt": (A1 + "\n\n").encode() * 100 + b"Tail \x00 of the file.\n",
        "late-nul.json": b'[{"abstract": "' + A1.encode() + b" " * 9000 + b'\x00"}]',
    }
    for name, data in binary.items():
        f = write(tmp_path / name, data)
        assert rejected([f], fresh_settings, embedder, before) == f"{f}: looks like a binary file, not text"
    # bytes without a NUL that are not UTF-8 either: the line of the first bad byte is named
    noise = write(tmp_path / "noise.txt", b"Fine first line.\n\n" + bytes(range(0x80, 0x100)))
    assert rejected([noise], fresh_settings, embedder, before) == (
        f"{noise}:3: not UTF-8 text (byte 0x80); save it as UTF-8"
    )


def test_non_utf8_text_names_the_file_and_line(tmp_path: Path, fresh_settings: Any, embedder: Any) -> None:
    before = seed(tmp_path, fresh_settings, embedder)
    cases = [
        ("latin1.txt", f"ICML 2026 Papers\n\n{A1}\n\nUn café à Paris. Résumé.\n".encode("latin-1"), 5, 0xE9),
        ("latin1-crlf.txt", f"{A1}\r\n\r\n{A2}\r\nna\u00efve wrap.\r\n".encode("latin-1"), 4, 0xEF),
        (
            "cp1252.jsonl",
            (json.dumps({"abstract": A1}) + '\n{"abstract": "\u201cquoted\u201d"}\n').encode("cp1252"),
            2,
            0x93,
        ),
        ("latin1.csv", "id,abstract\n1,Fine.\n2,Gar\u00e7on.\n".encode("latin-1"), 3, 0xE7),
    ]
    for name, data, line, byte in cases:
        f = write(tmp_path / name, data)
        message = rejected([f], fresh_settings, embedder, before)
        assert message == f"{f}:{line}: not UTF-8 text (byte 0x{byte:02x}); save it as UTF-8"


# --- BOM, CRLF, tabs and no-break spaces ---------------------------------------------------------------------


def test_bom_crlf_tabs_and_nbsp_are_normalised_and_evidence_is_verbatim(
    tmp_path: Path, fresh_settings: Any, embedder: Any
) -> None:
    from askpapers.rag.api import AskPapers

    messy_1 = "We propose\ta sparse\u00a0attention  mechanism\r\nfor long\u202fdocuments.\r\n\tIt scales linearly."
    clean_1 = "We propose a sparse attention mechanism for long documents. It scales linearly."
    messy_2 = "Graph\u00a0neural\u00a0networks\t\tstruggle with heterophily.\u3000We introduce a rewiring step."
    clean_2 = "Graph neural networks struggle with heterophily. We introduce a rewiring step."
    txt = write(
        tmp_path / "list.txt", b"\xef\xbb\xbf" + f"ICML 2026 Papers\r\n\r\n{messy_1}\r\n\r\n{messy_2}\r\n".encode()
    )
    messy_3 = "Diffusion\u00a0samplers are slow.\tWe distil them into a one-step student\u00a0model."
    clean_3 = "Diffusion samplers are slow. We distil them into a one-step student model."
    rec = {"id": "j1", "title": "Fast\u00a0Diffusion\tSampling", "abstract": messy_3}
    jl = write(tmp_path / "recs.jsonl", b"\xef\xbb\xbf" + (json.dumps(rec, ensure_ascii=False) + "\r\n").encode())

    papers = parse_paths([txt, jl]).papers
    assert [p.abstract for p in papers] == [clean_1, clean_2, clean_3]
    assert [(p.venue, p.year) for p in papers[:2]] == [("ICML 2026", 2026)] * 2
    assert papers[2].title == "Fast Diffusion Sampling"

    report = ingest([txt, jl], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.added, report.skipped, report.messages) == (3, 0, [])
    store = Store(fresh_settings.store, embedder.embedder_id, embedder.dim)
    snapshot_of(store)
    stored = store.get_papers([p.paper_id for p in papers])
    assert [stored[p.paper_id].abstract for p in papers] == [clean_1, clean_2, clean_3]
    got = store.chunks.get(include=["documents", "metadatas"])
    for doc, meta in zip(got["documents"], got["metadatas"], strict=True):
        assert stored[meta["paper_id"]].abstract[meta["start"] : meta["end"]] == doc  # chunks are verbatim slices

    app = AskPapers(fresh_settings)
    for question, pid in [
        ("Which papers use sparse attention?", papers[0].paper_id),
        ("Which papers are about heterophily?", papers[1].paper_id),
        ("Which papers distil diffusion samplers?", "j1"),
    ]:
        answer = app.ask(question)
        assert answer.found, question
        assert pid in [c.paper_id for c in answer.citations], question
        for c in answer.citations:
            assert c.abstract == stored[c.paper_id].abstract
            assert c.evidence and c.evidence in c.abstract
            assert not set(c.evidence) & {"\t", "\u00a0", "\u202f", "\u3000", "\r", "\n", "\ufeff"}


# --- one 5 MB paragraph ---------------------------------------------------------------------------------------


def _big_abstract(size: int) -> str:
    sentence = "We study sparse attention over very long inputs and report the memory it needs. "
    return (sentence * (size // len(sentence) + 1))[:size].strip()


def test_five_megabyte_paragraph_is_rejected_naming_the_file_and_line(
    tmp_path: Path, fresh_settings: Any, embedder: Any
) -> None:
    before = seed(tmp_path, fresh_settings, embedder)
    big = _big_abstract(5 * 1024 * 1024)
    assert len(big) > MAX_FIELD
    limit = f"abstract is {len(big):,} characters (limit {MAX_FIELD:,})"
    txt = write(tmp_path / "big.txt", f"ICML 2026 Papers\n\n{A1}\n\n{big}\n\n{A2}\n")
    assert rejected([txt], fresh_settings, embedder, before) == f"{txt}:5: {limit}"
    jl = jsonl(tmp_path / "big.jsonl", [{"id": "a", "abstract": A1}, {"id": "big", "abstract": big}])
    assert rejected([jl], fresh_settings, embedder, before) == f"{jl}:2: {limit}"
    csv_file = write(tmp_path / "big.csv", f'id,abstract\na,"{A1}"\nbig,"{big}"\nc,"{A2}"\n')
    assert rejected([csv_file], fresh_settings, embedder, before) == f"{csv_file}:3: {limit}"
    # the limit is exact: an abstract of MAX_FIELD characters parses, one character more does not
    at_limit = _big_abstract(MAX_FIELD + 10)[: MAX_FIELD - 1] + "x"
    assert len(at_limit) == MAX_FIELD
    (p,), skipped = parse_file(write(tmp_path / "at-limit.txt", at_limit + "\n"))
    assert (len(p.abstract), skipped) == (MAX_FIELD, 0)
    over = write(tmp_path / "over.txt", at_limit + "x\n")
    assert rejected([over], fresh_settings, embedder, before) == (
        f"{over}:1: abstract is {MAX_FIELD + 1:,} characters (limit {MAX_FIELD:,})"
    )


# --- 100k paragraphs ------------------------------------------------------------------------------------------


def _paragraph(i: int) -> str:
    if i % 2:  # half the abstracts derive the same title: unique_titles once took n² steps for them
        return f"We study graph neural networks. Variant {i} stacks {i % 13} layers."
    return f"Paper {i} studies sparse attention for topic {i % 97}. It improves accuracy by {i % 7} points."


def _many(path: Path, n: int) -> Path:
    return write(path, "LabConf 2025 Papers\n\n" + "\n\n".join(_paragraph(i) for i in range(n)) + "\n")


def test_parsing_work_grows_linearly_with_paragraphs_and_paragraph_length(tmp_path: Path) -> None:
    """Counted, not timed (tests/op_count.py): reading n, 2n and 4n paragraphs, or one paragraph of n, 2n and 4n
    sentences, adds twice the work on the second doubling as on the first (four times if quadratic)."""
    from tests.op_count import is_linear, ops, project_modules

    modules = project_modules()
    parse_paths([_many(tmp_path / "warm.txt", 4)])  # the bundled word lists load once, outside the count
    files = [_many(tmp_path / f"many-{n}.txt", n) for n in (500, 1000, 2000)]
    counts = [ops(lambda f=f: parse_paths([f]), modules) for f in files]
    assert is_linear(counts), counts
    longs = [write(tmp_path / f"long-{n}.txt", _big_abstract(n) + "\n") for n in (20_000, 40_000, 80_000)]
    counts = [ops(lambda f=f: parse_paths([f]), modules) for f in longs]
    assert is_linear(counts), counts


def test_20k_paragraphs_parse_with_unique_ids_and_titles_and_a_sample_ingests(
    tmp_path: Path, fresh_settings: Any, embedder: Any
) -> None:
    n = 20_000
    result = parse_paths([_many(tmp_path / "many.txt", n)])
    assert (len(result.papers), result.skipped, result.messages, result.files) == (n, 0, [], 1)
    assert [p.abstract for p in result.papers[:3]] == [_paragraph(0), _paragraph(1), _paragraph(2)]
    assert result.papers[-1].abstract == _paragraph(n - 1)
    assert all(p.venue == "LabConf 2025" and p.year == 2025 for p in result.papers)
    assert len({p.paper_id for p in result.papers}) == n
    titles = [p.title for p in result.papers]
    assert len({t.lower() for t in titles}) == n
    base = derive_title(_paragraph(1))  # the title half of them share
    assert base.startswith("Graph neural networks")
    shared = [t for t in titles if t.startswith(base)]
    assert len(shared) == n // 2
    assert {base, f"{base} ({n // 2})"} <= set(shared)

    # ingest only a sample (embedding 100k abstracts is the benchmark's job, not a unit test's)
    sample = write(
        tmp_path / "sample.txt", "LabConf 2025 Papers\n\n" + "\n\n".join(_paragraph(i) for i in range(24)) + "\n"
    )
    report = ingest([sample], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.added, report.skipped, report.chunks, report.total_papers) == (24, 0, 24, 24)
    stored, _ = snapshot(fresh_settings, embedder)
    assert set(stored) == {short_hash(_paragraph(i)) for i in range(24)}
    assert len({s.title.lower() for s in stored.values()}) == 24


# --- JSONL: a malformed line ----------------------------------------------------------------------------------


BROKEN_LINES = {
    "truncated": '{"id": "bad", "abstract": "We stop here',
    "not-an-object": '["id", "abstract"]',
    "trailing-garbage": '{"id": "bad", "abstract": "Fine."} trailing',
    "nested-too-deeply": "[" * 100_000 + "]" * 100_000,  # once a RecursionError (a traceback)
    "single-quotes": "{'id': 'bad', 'abstract': 'Python, not JSON.'}",
}


@pytest.mark.parametrize("kind", list(BROKEN_LINES))
def test_malformed_jsonl_line_aborts_the_file_or_is_skipped(
    tmp_path: Path, fresh_settings: Any, embedder: Any, kind: str
) -> None:
    before = seed(tmp_path, fresh_settings, embedder)
    good = [{"id": f"ok-{i}", "abstract": a} for i, a in enumerate([A1, A2, A3])]
    lines = [json.dumps(good[0]), "", json.dumps(good[1]), BROKEN_LINES[kind], json.dumps(good[2])]
    f = write(tmp_path / "papers.jsonl", "\n".join(lines) + "\n")
    message = rejected([f], fresh_settings, embedder, before)
    assert message.startswith(f"{f}:4: malformed JSON line (")
    assert message.endswith("); fix it or pass --skip-bad")
    assert not {"ok-0", "ok-1", "ok-2"} & set(snapshot(fresh_settings, embedder)[0])  # nothing of the file

    report = ingest([f], fresh_settings.store, progress=False, embedder=embedder, skip_bad=True)
    assert (report.added, report.skipped, report.total_papers) == (3, 1, 6)
    assert report.messages == [message.replace("; fix it or pass --skip-bad", "").replace(str(f), f"skipped {f}", 1)]
    stored, _ = snapshot(fresh_settings, embedder)
    assert set(stored) == {"seed-1", "seed-2", "seed-3", "ok-0", "ok-1", "ok-2"}


# --- records without an abstract, repeated ids ----------------------------------------------------------------


def test_records_without_an_abstract_are_skipped_and_counted(
    tmp_path: Path, fresh_settings: Any, embedder: Any
) -> None:
    records: list[dict[str, Any]] = [
        {"id": "ok-1", "abstract": A1},
        {"id": "none-1", "title": "Only a title"},
        {"id": "none-2", "abstract": ""},
        {"id": "none-3", "abstract": " \t\u00a0\u3000 "},
        {"id": "none-4", "abstract": None, "text": ""},
        {"id": "ok-2", "text": A2},
    ]
    f = jsonl(tmp_path / "papers.jsonl", records)
    report = ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.added, report.skipped, report.total_papers) == (2, 4, 2)
    assert report.messages == [f"skipped {f}:{n}: record has no abstract" for n in (2, 3, 4, 5)]
    before = snapshot(fresh_settings, embedder)
    assert set(before[0]) == {"ok-1", "ok-2"}
    # an abstract that is not text is an error, not a skip
    bad = jsonl(tmp_path / "bad.jsonl", [{"id": "ok-3", "abstract": A3}, {"id": "num", "abstract": 42}])
    assert rejected([bad], fresh_settings, embedder, before) == f"{bad}:2: 'abstract' must be a string"


def test_same_id_with_different_text_the_later_wins_and_the_report_says_so(
    tmp_path: Path, fresh_settings: Any, embedder: Any
) -> None:
    one = jsonl(tmp_path / "one.jsonl", [{"id": "p1", "abstract": A1}, {"id": "p2", "abstract": A3}])
    two = jsonl(tmp_path / "two.jsonl", [{"id": "p1", "abstract": A2}, {"id": "p2", "abstract": A3}])
    report = ingest([one, two], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.added, report.updated, report.total_papers) == (2, 0, 2)
    assert report.messages == [
        f"{two}: id p1 appears again with different text; the later one wins",
        f"skipped {two}: duplicate of paper p2",  # the same id with the same text: one paper, said so
    ]
    assert report.skipped == 1
    store = Store(fresh_settings.store, embedder.embedder_id, embedder.dim)
    snapshot_of(store)
    assert {pid: p.abstract for pid, p in store.get_papers(["p1", "p2"]).items()} == {"p1": A2, "p2": A3}
    # within one file too
    same = jsonl(tmp_path / "same.jsonl", [{"id": "p3", "abstract": A1}, {"id": "p3", "abstract": A4}])
    report = ingest([same], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.added, report.messages) == (
        1,
        [f"{same}: id p3 appears again with different text; the later one wins"],
    )
    assert store.get_papers(["p3"])["p3"].abstract == A4
    snapshot_of(store)


# --- CSV ------------------------------------------------------------------------------------------------------


def test_csv_with_quoted_newlines(tmp_path: Path, fresh_settings: Any, embedder: Any) -> None:
    rows = [
        "id,Title,Abstract,authors",
        'c1,"Sparse, Long","We propose a sparse attention mechanism\nfor long documents.\n\n'
        'It scales ""linearly""."," A; B "',
        "c2,No abstract,,C",
        f'c3,,"{A3}",',
        'c4,Wrapped,"Diffusion samplers are slow.\r\nWe distil them.",D',
    ]
    f = write(tmp_path / "papers.csv", "\r\n".join(rows) + "\r\n")
    result = parse_paths([f])
    by_id = {p.paper_id: p for p in result.papers}
    assert list(by_id) == ["c1", "c3", "c4"]
    assert by_id["c1"].abstract == 'We propose a sparse attention mechanism for long documents. It scales "linearly".'
    assert (by_id["c1"].title, by_id["c1"].authors) == ("Sparse, Long", ("A", "B"))
    assert by_id["c4"].abstract == "Diffusion samplers are slow. We distil them."
    assert by_id["c3"].title_derived and by_id["c3"].title
    # the record without an abstract is named by the line it starts on (c1 spans lines 2-5)
    assert result.messages == [f"skipped {f}:6: record has no abstract"]

    report = ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.added, report.skipped, report.total_papers) == (3, 1, 3)
    before = snapshot(fresh_settings, embedder)
    stored = Store(fresh_settings.store, embedder.embedder_id, embedder.dim).get_papers(["c1", "c4"])
    assert stored["c1"].abstract == by_id["c1"].abstract and "\n" not in stored["c4"].abstract

    # an unterminated quote once swallowed the rows after it into one abstract, silently; now it names the record
    broken = write(tmp_path / "broken.csv", f'id,abstract\nb1,"{A1}"\nb2,"{A2}\nb3,"{A4}"\nb4,{A3}\n')
    message = rejected([broken], fresh_settings, embedder, before)
    assert message.startswith(f"{broken}:3: malformed CSV in the record starting on this line (")
    trailing = write(tmp_path / "unterminated.csv", f'id,abstract\nb1,"{A1}"\n\nb2,"{A2}\n')
    message = rejected([trailing], fresh_settings, embedder, before)
    assert message == f"{trailing}:4: malformed CSV in the record starting on this line (unexpected end of data)"


# --- folders ---------------------------------------------------------------------------------------------------


def test_folder_with_unrelated_files(tmp_path: Path, fresh_settings: Any, embedder: Any) -> None:
    root = tmp_path / "corpus"
    write(root / "a.txt", f"ICML 2026 Papers\n\n{A1}\n")
    jsonl(root / "nested" / "b.jsonl", [{"id": "b", "abstract": A2}])
    write(root / "nested" / "deeper" / "c.CSV", f"id,abstract\nc,{A3}\n")
    write(root / "figure.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    write(root / "photo.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256)))
    write(root / "script.py", "print('We study graphs. It is not a corpus file.')\n")
    write(root / "notes.md", "# Notes\n\nA markdown note. It has sentences too.\n")
    write(root / "README", "No suffix. Not read from a folder.\n")
    write(root / "old.jsonl.bak", "{broken\n")
    write(root / ".hidden.txt", "A hidden file. Ignored.\n")
    write(root / ".DS_Store", b"\x00\x00\x00\x01Bud1\x00")
    (root / "empty-dir.txt").mkdir()  # a folder named like a corpus file

    report = ingest([root], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.files, report.added, report.skipped, report.messages) == (3, 3, 0, [])
    before = snapshot(fresh_settings, embedder)
    papers = Store(fresh_settings.store, embedder.embedder_id, embedder.dim).get_papers(list(before[0]))
    assert sorted(p.abstract for p in papers.values()) == sorted([A1, A2, A3])
    assert {Path(p.source).name for p in papers.values()} == {"a.txt", "b.jsonl", "c.CSV"}

    # one bad corpus file among them refuses the whole folder, naming that file
    bad = write(root / "nested" / "broken.jsonl", json.dumps({"abstract": A4}) + "\n{oops\n")
    message = rejected([root], fresh_settings, embedder, before)
    assert message.startswith(f"{bad}:2: malformed JSON line")
    # an unsupported file given by name (not found in a folder) is refused too
    notes = root / "notes.md"
    assert rejected([notes], fresh_settings, embedder, before) == (
        f"{notes}: unsupported file type '.md' (use .txt, .jsonl, .json or .csv)"
    )
    missing = root / "missing.txt"
    assert rejected([missing], fresh_settings, embedder, before) == f"{missing}: no such file or folder"


@pytest.mark.timeout(60)
def test_symlink_loop_in_a_folder(tmp_path: Path, fresh_settings: Any, embedder: Any) -> None:
    root = tmp_path / "corpus"
    write(root / "a.txt", f"{A1}\n")
    jsonl(root / "sub" / "b.jsonl", [{"id": "b", "abstract": A2}])
    try:
        os.symlink(root, root / "sub" / "back-to-root", target_is_directory=True)
        os.symlink(root / "sub", root / "sub" / "self", target_is_directory=True)
        os.symlink(root / "nowhere.txt", root / "dangling.txt")
        os.symlink("selfloop.txt", root / "selfloop.txt")
    except (OSError, NotImplementedError):  # pragma: no cover - platforms without symlinks
        pytest.skip("symlinks not supported")
    report = ingest([root], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.files, report.added, report.skipped, report.messages) == (2, 2, 0, [])
    stored, _ = snapshot(fresh_settings, embedder)
    assert set(stored) == {short_hash(A1), "b"}


# --- values that once crashed mid-ingest or left the store inconsistent --------------------------------------


def test_blank_id_gets_a_hash_id_instead_of_an_orphan_chunk(tmp_path: Path, fresh_settings: Any, embedder: Any) -> None:
    # once: paper_id "" -> chunk ":0" written, then Chroma refused the empty paper id (an orphan chunk)
    f = jsonl(
        tmp_path / "p.jsonl", [{"id": "   ", "abstract": A1}, {"id": "", "abstract": A2}, {"id": 0, "abstract": A3}]
    )
    report = ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.added, report.total_papers) == (3, 3)
    stored, chunks = snapshot(fresh_settings, embedder)
    assert set(stored) == {short_hash(A1), short_hash(A2), "0"}
    assert not any(c.startswith(":") for c in chunks)


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        # once a UnicodeEncodeError (a traceback), from JSON's "\ud800" escape
        ({"id": "s", "abstract": "Lone \ud800 surrogate."}, "the record holds '\\ud800', a lone surrogate"),
        ({"id": "s", "abstract": A4, "title": "T\udfff"}, "the record holds '\\udfff', a lone surrogate"),
        # once written, then an OverflowError from the BM25 index: every later question failed
        ({"id": "y", "abstract": A4, "year": 10**30}, f"'year' is {10**30}, which is not a year"),
        ({"id": "y", "abstract": A4, "year": "0"}, "'year' is 0, which is not a year"),
        # once an OverflowError (a traceback) from numpy
        ({"id": "e", "abstract": A4, "embedding": [10**400] + [0.1] * 383}, "'embedding' holds a number too large"),
    ],
)
def test_bad_field_values_are_rejected_naming_file_and_line(
    tmp_path: Path, fresh_settings: Any, embedder: Any, record: dict[str, Any], expected: str
) -> None:
    before = seed(tmp_path, fresh_settings, embedder)
    f = write(tmp_path / "p.jsonl", json.dumps({"id": "fine", "abstract": A1}) + "\n" + json.dumps(record) + "\n")
    message = rejected([f], fresh_settings, embedder, before)
    assert message.startswith(f"{f}:2: {expected}")


# --- the CLI ---------------------------------------------------------------------------------------------------


def run_cli(args: list[str], data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(data_dir), "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS)}
    for var in [v for v in env if v.startswith("ASKPAPERS_CHROMA_")]:
        env.pop(var)  # the CLI's own embedded store, in either test mode
    proc = subprocess.run([str(ASKPAPERS), *args], capture_output=True, text=True, env=env, timeout=300)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc


def cli_settings(data_dir: Path) -> StoreSettings:
    """The settings the CLI uses for ``ASKPAPERS_DATA_DIR=data_dir`` (its embedded store)."""
    return StoreSettings(data_dir=data_dir, collection="askpapers", chroma_host="", chroma_cloud_api_key=None)


def cli_store(data_dir: Path, embedder: Any) -> Store:
    return Store(cli_settings(data_dir), embedder.embedder_id, embedder.dim)


@pytest.fixture(scope="module")
def seeded_cli_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    d = tmp_path_factory.mktemp("cli-bad-files")
    f = jsonl(d / "input" / "seed.jsonl", SEED)
    report = ingest([f], cli_settings(d / "data"), progress=False, embedder=embedder)  # (in-process: faster)
    assert report.added == 3
    return d


BIG = _big_abstract(5 * 1024 * 1024)
CLI_CASES: dict[str, tuple[str, bytes, Callable[[Path], str]]] = {
    "binary": (
        "image.txt",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        lambda f: f"{f}: looks like a binary file, not text",
    ),
    "latin-1": (
        "latin1.txt",
        f"{A1}\n\nUn caf\u00e9.\n".encode("latin-1"),
        lambda f: f"{f}:3: not UTF-8 text (byte 0xe9); save it as UTF-8",
    ),
    "malformed-jsonl": (
        "bad.jsonl",
        (json.dumps({"abstract": A1}) + "\n" + '{"abstract": "cut\n').encode(),
        lambda f: f"{f}:2: malformed JSON line (Unterminated string starting at); fix it or pass --skip-bad",
    ),
    "5-MB-paragraph": (
        "big.txt",
        f"{A1}\n\n{BIG}\n".encode(),
        lambda f: f"{f}:3: abstract is {len(BIG):,} characters (limit {MAX_FIELD:,})",
    ),
    "broken-csv": (
        "bad.csv",
        f'id,abstract\n1,"{A1}"\n2,"{A2}\n'.encode(),
        lambda f: f"{f}:3: malformed CSV in the record starting on this line (unexpected end of data)",
    ),
}


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_cli_rejects_a_bad_file_with_one_line_and_leaves_the_store(
    seeded_cli_dir: Path, embedder: Any, case: str
) -> None:
    name, data, expected = CLI_CASES[case]
    f = write(seeded_cli_dir / "input" / case / name, data)
    good = jsonl(seeded_cli_dir / "input" / case / "good.jsonl", [{"id": f"good-{case}", "abstract": A3}])
    before = snapshot_of(cli_store(seeded_cli_dir / "data", embedder))
    proc = run_cli(["ingest", str(good), str(f), "--no-progress"], seeded_cli_dir / "data")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr == f"askpapers: error: {expected(f)}\n"
    after = snapshot_of(cli_store(seeded_cli_dir / "data", embedder))
    assert after == before and f"good-{case}" not in after[0]


def test_cli_skip_bad_skips_and_reports_the_line(tmp_path: Path) -> None:
    lines = [json.dumps({"id": "k1", "abstract": A1}), "{not json", json.dumps({"id": "k2", "abstract": A2})]
    f = write(tmp_path / "input" / "papers.jsonl", "\n".join(lines) + "\n")
    proc = run_cli(["ingest", str(f), "--no-progress"], tmp_path / "data")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"askpapers: error: {f}:2: malformed JSON line (")
    proc = run_cli(["ingest", str(f), "--skip-bad", "--no-progress"], tmp_path / "data")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith(f"skipped {f}:2: malformed JSON line (")
    assert proc.stdout.startswith("2 added, 0 updated, 0 unchanged, 1 skipped; 2 chunks written")


# --- properties --------------------------------------------------------------------------------------------------

# pieces that exercise the parser's and the titler's paths: whitespace of every kind, headers, methods, acronyms
PIECES = [
    "\n", "\n\n", "\r\n", "\r", "\t", " ", "  ", "\u00a0", "\u202f", "\u3000", "\u200b", "\ufeff", "\u2028", "\x0b",
    "\x0c", "\x1c", "\x85", ".", ". ", "!", "?", ",", ";", ":", "(", ")", "*", "**", '"', "'", "“", "”", "-", "e.g.",
    "ICML 2026 Papers", "NeurIPS'24", "论文列表", "We propose ", "we introduce ", "called ", "termed ",
    "In this paper, ",    "SoftBinary Coding (SBC)", "GraphNet", "WaterSIC", "LLMs", "(GNNs)", "Graph Neural Network", "https://github.com/a/b",
    "abstract", "the", "of", "A", "x", "1", "2024", "ﬁ", "Å", "e\u0301", "ß", "😀",
]  # fmt: skip
messy_text = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=40).map("".join)
any_text = st.one_of(messy_text, st.text())


def _check_papers(result: Any) -> None:
    """The invariants of every successful parse."""
    ids = [p.paper_id for p in result.papers]
    assert len(ids) == len(set(ids)) and all(ids)
    assert len({abstract_key(p.abstract) for p in result.papers}) == len(result.papers)
    derived = [p.title.lower() for p in result.papers if p.title_derived]
    assert len(derived) == len(set(derived))
    for p in result.papers:
        assert p.abstract and len(p.abstract) <= MAX_FIELD
        assert p.abstract == one_line(p.abstract)  # one line, single spaces, stripped
        assert one_line(normalise(p.abstract)) == p.abstract  # already normalised
        assert not set(p.abstract) & {"\n", "\r", "\t", "\u00a0", "\ufeff", "\u3000", "\u200b"}
        assert p.title and p.title == one_line(p.title)


WHOLE_FILE = ("the file is empty", "looks like a binary file, not text")  # the errors that name no line


def _parse_or_input_error(f: Path, **kwargs: Any) -> Any:
    try:
        result = parse_paths([f], **kwargs)
    except InputError as e:  # anything else is a bug
        assert str(e).startswith(str(f)), e
        assert "\n" not in str(e)
        return None
    _check_papers(result)
    return result


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


# no example database: nothing is written into the project
PROPERTY = hyp_settings(deadline=None, max_examples=100, database=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(text=any_text, suffix=st.sampled_from([".txt", ".csv", ".jsonl", ".json"]))
def test_property_any_text_parses_or_is_an_input_error(scratch: Path, text: str, suffix: str) -> None:
    f = write(scratch / f"any{suffix}", text)
    result = _parse_or_input_error(f)
    if result is not None and suffix == ".txt":
        # a plain-text list carries no titles: every title is derived, and every paper names its file
        assert all(p.title_derived and p.source == str(f) for p in result.papers)


@PROPERTY
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".txt", ".csv", ".jsonl", ".json"]))
def test_property_any_bytes_parse_or_are_an_input_error(scratch: Path, data: bytes, suffix: str) -> None:
    _parse_or_input_error(write(scratch / f"bytes{suffix}", data))


# JSON values as a record's fields might hold them, lone surrogates (as "\ud800" escapes) and huge integers included
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([10**30, -1, 0, 2024, "2024", "²", "n/a"]),
    st.floats(allow_nan=True, allow_infinity=True),
    any_text,
    st.text(alphabet=st.characters(codec=None, categories=["Cs", "Ll", "Zs"]), max_size=5),
)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4), max_leaves=12)
KEYS = ["id", "title", "abstract", "text", "year", "venue", "authors", "keywords", "url", "embedding", "embedder"]
records = st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=4)), json_values, max_size=8)
jsonl_lines = st.lists(
    st.one_of(
        records.map(json.dumps),
        st.tuples(records.map(json.dumps), st.integers(0, 50)).map(lambda t: t[0][: t[1]]),  # cut short
        any_text.map(lambda t: t.replace("\n", " ")),
    ),
    max_size=6,
)


@PROPERTY
@given(lines=jsonl_lines, skip_bad=st.booleans())
def test_property_jsonl_records_parse_or_are_an_input_error(scratch: Path, lines: list[str], skip_bad: bool) -> None:
    f = write(scratch / "recs.jsonl", "\n".join(lines) + "\n")
    try:
        result = parse_paths([f], skip_bad=skip_bad)
    except InputError as e:
        message = str(e)
        no_paper = message.startswith(f"{f}: no ") and message.endswith("; fix the file or pass --skip-bad")
        assert (
            message in {f"{f}: {m}" for m in WHOLE_FILE} or re.match(rf"{re.escape(str(f))}:\d+: ", message) or no_paper
        ), message
        assert not (no_paper and skip_bad), "with --skip-bad a file without papers is skipped, not an error"
        if skip_bad:
            assert "malformed JSON line" not in message
        return
    _check_papers(result)
    assert all(len(m.split("\n")) == 1 for m in result.messages)


@PROPERTY
@given(rows=st.lists(st.lists(st.one_of(any_text, st.sampled_from(['"', '""', ",", "\n"])), max_size=4), max_size=5))
def test_property_csv_cells_parse_or_are_an_input_error(scratch: Path, rows: list[list[str]]) -> None:
    body = "\n".join(",".join(cells) for cells in rows)
    f = write(scratch / "cells.csv", "id,title,abstract\n" + body + "\n")
    _parse_or_input_error(f)


@hyp_settings(deadline=None, max_examples=200, database=None)
@given(text=any_text)
def test_property_derive_title_is_short_nonempty_and_deterministic(text: str) -> None:
    title = derive_title(text)
    assert isinstance(title, str)
    assert title and title == one_line(title)
    assert len(title) <= MAX_TITLE
    assert derive_title("".join(list(text))) == title


def test_derive_title_of_long_or_repetitive_text_is_short_and_fast() -> None:
    assert derive_title("a" * 5000) == "A" + "a" * (MAX_TITLE - 2) + "…"
    long_words = " ".join(["Supercalifragilistic"] * 40) + "."
    t = derive_title(long_words)
    assert len(t) <= MAX_TITLE and not t.endswith(" …")  # short, and never a word cut in two
    t = derive_title("We study things. " + "we propose " * 20_000)  # once quadratic: about two minutes
    assert t and len(t) <= MAX_TITLE


def test_derive_title_work_grows_linearly_with_repetitive_text() -> None:
    from tests.op_count import is_linear, ops, project_modules

    modules = project_modules()
    derive_title("We study things. we propose it.")  # the bundled word lists load once, outside the count
    texts = ["We study things. " + "we propose " * n for n in (500, 1000, 2000)]
    counts = [ops(lambda t=t: derive_title(t), modules) for t in texts]
    assert is_linear(counts), counts


def _unique_titles_reference(titles: list[tuple[str, str]], taken: set[str]) -> dict[str, str]:
    """The original (quadratic) algorithm, as an oracle for the faster one."""
    used = set(taken)
    out = {}
    for key, title in titles:
        candidate, n = title, 2
        while candidate.lower() in used:
            candidate, n = f"{title} ({n})", n + 1
        used.add(candidate.lower())
        out[key] = candidate
    return out


title_pool = st.one_of(
    st.sampled_from(["T", "t", "T (2)", "t (3)", "T (2) (2)", "X", "x (2)", ""]), st.text(max_size=3)
)


@hyp_settings(deadline=None, max_examples=200, database=None)
@given(titles=st.lists(title_pool, max_size=30), taken=st.sets(title_pool.map(str.lower), max_size=6))
def test_property_unique_titles_are_unique(titles: list[str], taken: set[str]) -> None:
    pairs = [(str(i), t) for i, t in enumerate(titles)]
    out = unique_titles(pairs, taken=set(taken))
    assert list(out) == [k for k, _ in pairs]
    lowered = [v.lower() for v in out.values()]
    assert len(lowered) == len(set(lowered))
    assert not set(lowered) & taken
    for key, title in pairs:
        assert out[key] == title or re.fullmatch(re.escape(title) + r" \(\d+\)", out[key])
    assert out == _unique_titles_reference(pairs, taken)
    assert unique_titles(pairs, taken=set(taken)) == out


def test_unique_titles_work_grows_linearly() -> None:
    """Counted, not timed: n, 2n and 4n papers of one title. The original algorithm (the reference above) counts
    quadratic on the same input, so the count can tell the two apart."""
    from tests.op_count import is_linear, ops, project_modules

    modules = project_modules()
    same = {n: [(str(i), "Same title") for i in range(n)] for n in (500, 1000, 2000)}
    counts = [ops(lambda n=n: unique_titles(same[n]), modules) for n in same]
    assert is_linear(counts), counts
    reference = [ops(lambda n=n: _unique_titles_reference(same[n], set()), modules, also=(__file__,)) for n in same]
    assert not is_linear(reference), reference
    out = unique_titles([(str(i), "Same title") for i in range(50_000)])
    assert out["0"] == "Same title" and out["49999"] == "Same title (50000)"
