"""Tests for vectorstore.parse: corpus files (txt/jsonl/json/csv/folders) -> Paper records."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from askpapers.vectorstore.errors import InputError
from askpapers.vectorstore.parse import ParseResult, abstract_key, parse_file, parse_paths, short_hash

DATA = Path(__file__).resolve().parent.parent / "data" / "icml2026"

A1 = (
    "We propose a sparse attention mechanism for long documents. It scales linearly with length. "
    "Experiments on five benchmarks show consistent gains."
)
A2 = (
    "Large language models often hallucinate facts. We study why this happens during pre-training. "
    "Our analysis points to data frequency."
)
A3 = (
    "Graph neural networks struggle with heterophily. We introduce a simple rewiring step. "
    "It improves node classification on nine datasets."
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    return write(path, "".join(json.dumps(r) + "\n" for r in records))


# --- the plain-text list shape -------------------------------------------------------------------


@pytest.mark.parametrize("header", ["ICML 2026 论文列表", "ICML 2026 Papers"])
def test_header_line_sets_venue_and_year(tmp_path: Path, header: str) -> None:
    f = write(tmp_path / "list.txt", f"{header}\n\n{A1}\n\n{A2}\n")
    papers, skipped = parse_file(f)
    assert skipped == 0
    assert [p.abstract for p in papers] == [A1, A2]
    assert all(p.venue == "ICML 2026" for p in papers)
    assert all(p.year == 2026 for p in papers)
    assert all(p.title_derived for p in papers)


def test_header_line_without_space_before_chinese(tmp_path: Path) -> None:
    f = write(tmp_path / "list.txt", f"ICML 2026论文列表\n\n{A1}\n\n{A2}\n")
    papers, _ = parse_file(f)
    assert len(papers) == 2
    assert {(p.venue, p.year) for p in papers} == {("ICML 2026", 2026)}


def test_no_header_line_every_paragraph_is_an_abstract(tmp_path: Path) -> None:
    f = write(tmp_path / "list.txt", f"{A1}\n\n{A2}\n\n{A3}\n")
    papers, skipped = parse_file(f)
    assert skipped == 0
    assert [p.abstract for p in papers] == [A1, A2, A3]
    assert all(p.venue == "" for p in papers)
    assert all(p.year is None for p in papers)


def test_crlf_line_endings(tmp_path: Path) -> None:
    f = tmp_path / "list.txt"
    f.write_bytes(f"ICML 2026 Papers\r\n\r\n{A1}\r\n\r\n{A2}\r\n".encode())
    papers, _ = parse_file(f)
    assert [p.abstract for p in papers] == [A1, A2]
    assert all("\r" not in p.abstract for p in papers)
    assert all(p.venue == "ICML 2026" for p in papers)


def test_utf8_bom(tmp_path: Path) -> None:
    f = tmp_path / "list.txt"
    f.write_bytes(b"\xef\xbb\xbf" + f"ICML 2026 Papers\n\n{A1}\n\n{A2}\n".encode())
    papers, _ = parse_file(f)
    assert [p.abstract for p in papers] == [A1, A2]
    assert all(p.venue == "ICML 2026" and p.year == 2026 for p in papers)
    assert all("\ufeff" not in p.abstract for p in papers)


def test_bom_and_crlf_without_header(tmp_path: Path) -> None:
    f = tmp_path / "list.txt"
    f.write_bytes(b"\xef\xbb\xbf" + f"{A1}\r\n\r\n{A2}\r\n".encode())
    papers, _ = parse_file(f)
    assert [p.abstract for p in papers] == [A1, A2]
    assert papers[0].abstract.startswith("We propose")


def test_stray_blank_and_whitespace_only_lines(tmp_path: Path) -> None:
    text = f"\n\nICML 2026 Papers\n\n\n\n{A1}\n   \n\t\n\n\n{A2}\n \n\u3000\n{A3}\n\n\n\n"
    f = write(tmp_path / "list.txt", text)
    papers, skipped = parse_file(f)
    assert skipped == 0
    assert [p.abstract for p in papers] == [A1, A2, A3]
    assert all(p.venue == "ICML 2026" for p in papers)


def test_wrapped_paragraph_becomes_one_line(tmp_path: Path) -> None:
    wrapped = A1.replace(" It scales", "\nIt scales").replace(" on five", "\n  on five")
    assert wrapped.count("\n") == 2
    f = write(tmp_path / "list.txt", f"ICML 2026 Papers\n\n{wrapped}\n\n{A2}\n")
    papers, _ = parse_file(f)
    assert len(papers) == 2
    assert papers[0].abstract == A1
    assert "\n" not in papers[0].abstract
    assert "  " not in papers[0].abstract


def test_bundled_corpus() -> None:
    files = sorted(DATA.glob("*.txt"))
    assert len(files) == 2
    for f in files:
        papers, skipped = parse_file(f)
        assert len(papers) == 19, f
        assert skipped == 0
    result = parse_paths([DATA])
    assert isinstance(result, ParseResult)
    assert result.files == 2
    assert result.skipped == 0
    assert len(result.papers) == 38
    assert len({p.paper_id for p in result.papers}) == 38
    assert len({p.title.lower() for p in result.papers}) == 38
    assert all(p.venue == "ICML 2026" and p.year == 2026 for p in result.papers)
    assert all(p.abstract and "\n" not in p.abstract for p in result.papers)
    assert all(re.fullmatch(r"[0-9a-f]{16}", p.paper_id) for p in result.papers)


# --- JSONL / JSON / CSV ---------------------------------------------------------------------------


def test_jsonl_all_fields(tmp_path: Path) -> None:
    rec = {
        "id": "paper-42",
        "title": "Sparse Attention for Long Documents",
        "abstract": A1,
        "authors": ["Ada Lovelace", "Alan Turing"],
        "keywords": "attention; efficiency | long context",
        "venue": "NeurIPS 2025",
        "year": 2025,
        "url": "https://example.org/paper-42",
    }
    f = jsonl(tmp_path / "papers.jsonl", [rec])
    papers, skipped = parse_file(f)
    assert skipped == 0
    (p,) = papers
    assert p.paper_id == "paper-42"
    assert p.title == "Sparse Attention for Long Documents"
    assert p.title_derived is False
    assert p.abstract == A1
    assert p.authors == ("Ada Lovelace", "Alan Turing")
    assert p.keywords == ("attention", "efficiency", "long context")
    assert p.venue == "NeurIPS 2025"
    assert p.year == 2025
    assert p.url == "https://example.org/paper-42"
    assert p.source == str(f)
    assert p.has_code is False


def test_jsonl_year_as_string_and_from_venue(tmp_path: Path) -> None:
    f = jsonl(
        tmp_path / "papers.jsonl",
        [{"id": "a", "abstract": A1, "year": "2024"}, {"id": "b", "abstract": A2, "venue": "ICLR 2023"}],
    )
    papers, _ = parse_file(f)
    assert [p.year for p in papers] == [2024, 2023]


def test_jsonl_text_instead_of_abstract(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "papers.jsonl", [{"id": "t1", "text": A2}])
    papers, _ = parse_file(f)
    assert [p.abstract for p in papers] == [A2]
    assert papers[0].paper_id == "t1"
    assert papers[0].title_derived is True
    assert papers[0].title


def test_jsonl_malformed_line_names_path_and_line(tmp_path: Path) -> None:
    text = json.dumps({"abstract": A1}) + "\n\n" + '{"abstract": "broken\n' + json.dumps({"abstract": A2}) + "\n"
    f = write(tmp_path / "papers.jsonl", text)
    with pytest.raises(InputError) as exc:
        parse_file(f)
    assert f"{f}:3" in str(exc.value)
    assert f"{f}:1" not in str(exc.value)
    with pytest.raises(InputError, match=re.escape(f"{f}:3")):
        parse_paths([f])


def test_jsonl_non_object_line_is_malformed(tmp_path: Path) -> None:
    f = write(tmp_path / "papers.jsonl", json.dumps({"abstract": A1}) + "\n[1, 2, 3]\n")
    with pytest.raises(InputError, match=re.escape(f"{f}:2")):
        parse_file(f)


def test_jsonl_skip_bad_skips_and_counts(tmp_path: Path) -> None:
    text = json.dumps({"abstract": A1}) + "\n\n" + "{not json}\n" + json.dumps({"abstract": A2}) + "\n"
    f = write(tmp_path / "papers.jsonl", text)
    result = parse_paths([f], skip_bad=True)
    assert [p.abstract for p in result.papers] == [A1, A2]
    assert result.skipped == 1
    assert any(f"{f}:3" in m for m in result.messages)
    papers, skipped = parse_file(f, skip_bad=True)
    assert len(papers) == 2
    assert skipped == 1


def test_json_array(tmp_path: Path) -> None:
    recs = [
        {"id": "j1", "title": "First", "abstract": A1, "authors": ["X"]},
        {"id": "j2", "abstract": A2, "keywords": ["k1", "k2"]},
    ]
    f = write(tmp_path / "papers.json", json.dumps(recs, indent=2))
    papers, skipped = parse_file(f)
    assert skipped == 0
    assert [p.paper_id for p in papers] == ["j1", "j2"]
    assert [p.abstract for p in papers] == [A1, A2]
    assert papers[0].title == "First"
    assert papers[0].authors == ("X",)
    assert papers[1].keywords == ("k1", "k2")
    assert papers[1].title_derived is True


def test_json_object_with_papers_key(tmp_path: Path) -> None:
    f = write(tmp_path / "papers.json", json.dumps({"papers": [{"abstract": A3}]}))
    papers, _ = parse_file(f)
    assert [p.abstract for p in papers] == [A3]


def test_json_malformed_names_file(tmp_path: Path) -> None:
    f = write(tmp_path / "papers.json", '[\n  {"abstract": "x"},\n  {oops}\n]')
    with pytest.raises(InputError, match=re.escape(f"{f}:3")):
        parse_file(f)


def test_csv_with_quoted_newline(tmp_path: Path) -> None:
    wrapped = A1.replace(" It scales", "\nIt scales")
    text = 'id,Title,Abstract,authors\nc1,First Paper,"' + wrapped + '","A; B"\nc2,Second,' + A3 + ",\n"
    f = write(tmp_path / "papers.csv", text)
    papers, skipped = parse_file(f)
    assert skipped == 0
    assert [p.paper_id for p in papers] == ["c1", "c2"]
    assert papers[0].abstract == A1
    assert papers[0].title == "First Paper"
    assert papers[0].authors == ("A", "B")
    assert papers[1].abstract == A3
    assert papers[1].authors == ()


def test_record_without_abstract_is_skipped_and_counted(tmp_path: Path) -> None:
    f = jsonl(
        tmp_path / "papers.jsonl",
        [{"id": "1", "abstract": A1}, {"id": "2", "title": "Only a title"}, {"id": "3", "abstract": "   "}],
    )
    result = parse_paths([f])
    assert [p.paper_id for p in result.papers] == ["1"]
    assert result.skipped == 2
    assert sum("no abstract" in m for m in result.messages) == 2
    assert any(f"{f}:2" in m for m in result.messages)

    c = write(tmp_path / "papers.csv", f"id,title,abstract\n1,T1,{A1}\n2,T2,\n")
    papers, skipped = parse_file(c)
    assert [p.paper_id for p in papers] == ["1"]
    assert skipped == 1


def test_skipped_count_does_not_depend_on_path(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "malformed-inputs" / "papers.jsonl", [{"id": "1", "abstract": A1}, {"id": "2"}])
    papers, skipped = parse_file(f)
    assert len(papers) == 1
    assert skipped == 1


# --- paper ids and merging -----------------------------------------------------------------------


def test_hash_id_is_stable_and_normalised(tmp_path: Path) -> None:
    h = short_hash(A1)
    assert re.fullmatch(r"[0-9a-f]{16}", h)
    assert short_hash(A1) == h
    assert short_hash("  " + A1.upper().replace(" ", "  \n ") + "\n") == h
    assert short_hash(A2) != h
    assert abstract_key(A1.upper()) == abstract_key(A1)

    f1 = write(tmp_path / "a" / "one.txt", f"{A1}\n\n{A2}\n")
    f2 = write(tmp_path / "b" / "two.jsonl", json.dumps({"abstract": A1.upper()}) + "\n")
    (p1, p2), _ = parse_file(f1)
    (q1,), _ = parse_file(f2)
    assert p1.paper_id == h
    assert p2.paper_id == short_hash(A2)
    assert p1.paper_id != p2.paper_id
    assert q1.paper_id == p1.paper_id  # same abstract up to case -> same id


def test_own_id_is_used_when_given(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "p.jsonl", [{"id": " 123 ", "abstract": A1}, {"id": 7, "abstract": A2}])
    papers, _ = parse_file(f)
    assert [p.paper_id for p in papers] == ["123", "7"]


def test_identical_abstracts_in_two_files_become_one_paper(tmp_path: Path) -> None:
    f1 = write(tmp_path / "one.txt", f"{A1}\n\n{A2}\n")
    f2 = write(tmp_path / "two.txt", f"{A3}\n\n{A1.replace(' It ', chr(10) + 'It ')}\n")
    result = parse_paths([f1, f2])
    assert sorted(p.abstract for p in result.papers) == sorted([A1, A2, A3])
    assert len(result.papers) == 3


def test_identical_abstract_with_different_ids_is_a_duplicate(tmp_path: Path) -> None:
    f1 = jsonl(tmp_path / "one.jsonl", [{"id": "x", "abstract": A1}])
    f2 = jsonl(tmp_path / "two.jsonl", [{"id": "y", "abstract": A1}, {"id": "z", "abstract": A2}])
    result = parse_paths([f1, f2])
    assert sorted(p.paper_id for p in result.papers) == ["x", "z"]
    assert result.skipped == 1
    assert any("duplicate of paper x" in m for m in result.messages)


def test_same_id_different_text_later_wins(tmp_path: Path) -> None:
    f1 = jsonl(tmp_path / "one.jsonl", [{"id": "p1", "abstract": A1}])
    f2 = jsonl(tmp_path / "two.jsonl", [{"id": "p1", "abstract": A2}])
    result = parse_paths([f1, f2])
    assert len(result.papers) == 1
    assert result.papers[0].paper_id == "p1"
    assert result.papers[0].abstract == A2
    assert result.papers[0].source == str(f2)
    assert any("p1" in m and "later one wins" in m for m in result.messages)


def test_replaced_text_can_still_be_ingested_under_another_id(tmp_path: Path) -> None:
    f1 = jsonl(tmp_path / "one.jsonl", [{"id": "p1", "abstract": A1}])
    f2 = jsonl(tmp_path / "two.jsonl", [{"id": "p1", "abstract": A2}])
    f3 = jsonl(tmp_path / "three.jsonl", [{"id": "p2", "abstract": A1}])
    result = parse_paths([f1, f2, f3])
    assert {p.paper_id: p.abstract for p in result.papers} == {"p1": A2, "p2": A1}


def test_derived_titles_are_made_unique(tmp_path: Path) -> None:
    b1 = "Contrastive pretraining of speech encoders is studied here. We report results on 3 speech sets."
    b2 = "Contrastive pretraining of speech encoders is studied here. We report results on 4 speech sets."
    f = jsonl(tmp_path / "p.jsonl", [{"abstract": b1}, {"abstract": b2}])
    result = parse_paths([f])
    titles = [p.title for p in result.papers]
    assert len(titles) == 2
    assert len({t.lower() for t in titles}) == 2
    assert titles[1] == titles[0] + " (2)"


# --- errors ------------------------------------------------------------------------------------------


def test_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    with pytest.raises(InputError, match=re.escape(str(missing))):
        parse_paths([missing])


def test_latin1_file(tmp_path: Path) -> None:
    f = tmp_path / "latin.txt"
    f.write_bytes(("Caf\u00e9 au lait improves sleep. We test it on many subjects.\n").encode("latin-1"))
    with pytest.raises(InputError) as exc:
        parse_paths([f])
    msg = str(exc.value)
    assert "UTF-8" in msg
    assert str(f) in msg
    assert f"{f}:1" in msg


def test_latin1_reports_line(tmp_path: Path) -> None:
    f = tmp_path / "latin.txt"
    f.write_bytes(f"{A1}\n\n{A2}\n\nNa\u00efve baselines fail.\n".encode("latin-1"))
    with pytest.raises(InputError, match=re.escape(f"{f}:5")):
        parse_file(f)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n\t\n"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    f = tmp_path / "empty.txt"
    f.write_bytes(content)
    with pytest.raises(InputError, match="empty") as exc:
        parse_paths([f])
    assert str(f) in str(exc.value)


def test_binary_file(tmp_path: Path) -> None:
    f = tmp_path / "data.txt"
    f.write_bytes(b"PK\x03\x04\x00\x00binary\x00stuff" * 10)
    with pytest.raises(InputError, match="binary") as exc:
        parse_paths([f])
    assert str(f) in str(exc.value)


def test_unsupported_file_given_directly(tmp_path: Path) -> None:
    f = write(tmp_path / "notes.md", A1)
    with pytest.raises(InputError, match=re.escape(str(f))):
        parse_paths([f])


def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "readme.md", A1)
    with pytest.raises(InputError, match="no corpus files"):
        parse_paths([tmp_path])


# --- folders -----------------------------------------------------------------------------------------


@pytest.mark.timeout(20)
def test_folder_reads_only_corpus_files_recursively(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write(root / "a.txt", f"ICML 2026 Papers\n\n{A1}\n")
    jsonl(root / "nested" / "deeper" / "b.jsonl", [{"id": "b", "abstract": A2}])
    write(root / "nested" / "c.json", json.dumps([{"id": "c", "abstract": A3}]))
    a4 = "Diffusion samplers are slow at inference time. We distil them into one step."
    write(root / "d.CSV", f"id,abstract\nd,{a4}\n")
    write(root / "notes.md", "A markdown note that is not a corpus file. It has sentences.")
    (root / "figure.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(root / ".hidden.txt", "A hidden file should be ignored. It has text.")
    result = parse_paths([root])
    assert result.files == 4
    assert sorted(p.abstract for p in result.papers) == sorted([A1, A2, A3, a4])
    sources = {Path(p.source).name for p in result.papers}
    assert sources == {"a.txt", "b.jsonl", "c.json", "d.CSV"}


@pytest.mark.timeout(20)
def test_folder_symlink_loop(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write(root / "a.txt", f"{A1}\n")
    jsonl(root / "sub" / "b.jsonl", [{"id": "b", "abstract": A2}])
    try:
        os.symlink(root, root / "sub" / "back-to-parent", target_is_directory=True)
        os.symlink(root / "sub", root / "sub" / "self", target_is_directory=True)
    except (OSError, NotImplementedError):  # pragma: no cover - platforms without symlinks
        pytest.skip("symlinks not supported")
    result = parse_paths([root])
    assert result.files == 2
    assert len(result.papers) == 2
    assert sorted(p.abstract for p in result.papers) == sorted([A1, A2])
    assert result.skipped == 0


# --- code links ----------------------------------------------------------------------------------


def test_github_links_become_code_urls(tmp_path: Path) -> None:
    a = (
        "We release a toolkit for sparse attention. Code is available at https://github.com/org/sparse-attn. "
        "A fork (https://github.com/other/fork.v2), and https://github.com/org/sparse-attn again."
    )
    f = write(tmp_path / "list.txt", f"{a}\n\n{A2}\n")
    papers, _ = parse_file(f)
    with_code, without = papers
    assert with_code.code_urls == ("https://github.com/org/sparse-attn", "https://github.com/other/fork.v2")
    assert with_code.has_code is True
    assert without.code_urls == ()
    assert without.has_code is False


def test_github_url_field_counts_as_code(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "p.jsonl", [{"id": "u", "abstract": A1, "url": "https://github.com/org/repo"}])
    (p,), _ = parse_file(f)
    assert p.code_urls == ("https://github.com/org/repo",)
    assert p.has_code


def test_jsonl_is_read_one_line_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A JSONL corpus with embeddings runs to hundreds of megabytes: it must never be read whole."""
    import askpapers.vectorstore.formats as formats

    def whole_file(path: Path) -> str:
        raise AssertionError(f"{path} was read whole")

    monkeypatch.setattr(formats, "read_text", whole_file)
    f = tmp_path / "big.jsonl"
    lines = [json.dumps({"id": "a", "abstract": "First\u00a0abstract\there."}, ensure_ascii=False), "",
             json.dumps({"id": "b", "title": "T\u00a0B", "abstract": "Second one."}, ensure_ascii=False)]  # fmt: skip
    f.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    papers, skipped = parse_file(f)
    assert [(p.paper_id, p.abstract) for p in papers] == [("a", "First abstract here."), ("b", "Second one.")]
    assert papers[1].title == "T B"
    assert skipped == 0
    f.write_bytes(f.read_bytes() + b'{"abstract": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"big\.jsonl:4: not UTF-8 text \(byte 0xe9\)"):
        parse_file(f)
