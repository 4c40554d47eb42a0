"""Bad questions get a sensible answer or a one-line message, never a traceback, through every door.

Empty, huge, control characters, stop-words only, FTS5/BM25 syntax, SQL-looking text, emoji, Chinese and
right-to-left text, and paper ids that do not exist: through the Python API (``AskPapers.ask``/``search``,
``rag.api.ask_stream``), the ``askpapers`` command in fresh processes, the web app's HTTP API and its chat.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from askpapers.vectorstore.errors import QuestionError
from tests.conftest import CORPUS
from tests.test_answers import IB_PAPERS, _verified

ASKPAPERS = Path(sys.executable).parent / "askpapers"
IB = "Which papers use information bottleneck?"
EMPTY = "the question is empty"
NO_WORDS = "The question has no words to search for. Please rephrase it."
NOT_LATIN = (
    "The offline answerer reads English, and this question has no words in Latin script to search for. Ask in "
    "English, or set up an LLM endpoint (OPENAI_API_KEY or OPENAI_BASE_URL), which reads questions in any language."
)
# Strings that mean something to FTS5 (or to SQL) if they ever reach it as syntax.
FTS_SYNTAX = [
    '"',
    '""',
    "*",
    "NEAR",
    "NEAR(a b)",
    "NEAR(information bottleneck, 2)",
    "^",
    "^information",
    "OR",
    "AND NOT",
    "NOT information",
    "-",
    "-information",
    ":",
    "()",
    "(",
    ")",
    "title:foo",
    "abstract:information",
    "{title abstract}: bottleneck",
    "information + bottleneck",
    'information "bottleneck',
    "information bottleneck OR",
    '"information bottleneck',
    "information* bottleneck^",
    "paper_id:*",
]
SQL = ["'; DROP TABLE papers; --", "1 OR 1=1", "' OR '1'='1", 'papers"); DELETE FROM papers; --']
CHINESE = "哪些论文使用信息瓶颈？"
ARABIC = "ما هي الأوراق التي تستخدم عنق الزجاجة المعلوماتي؟"
HEBREW = "אילו מאמרים משתמשים בצוואר בקבוק של מידע?"
UNKNOWN_IDS = {
    "What does paper 0123456789abcdef propose?": "0123456789abcdef",
    "Summarise paper id nonexistent-123": "nonexistent-123",
}


def _no_match(answer: Any) -> None:
    """An abstention: says so, cites nothing, and has no [n] marker."""
    assert answer.found is False
    assert answer.citations == []
    assert not re.search(r"\[\d+\]", answer.text)


def _answers(app: Any, question: str) -> Any:
    """ask() and search() both work on the question; returns the answer after checking its citations."""
    answer = app.ask(question)
    assert answer.mode == "extractive" and answer.text.strip()
    _verified(answer, app)
    if not answer.found:
        _no_match(answer)
    hits = app.search(question)
    stored = app.index.papers([h.paper_id for h in hits])
    assert all(h.paper_id in stored and h.title == stored[h.paper_id].title for h in hits)
    return answer


# -- the Python API -------------------------------------------------------------------------------------


@pytest.mark.parametrize("question", ["", "   ", "\n\t \r\n", "\x00\x1b[31m\x7f \x1b[0m", "\u3000\x0b\x0c"])
def test_empty_question_is_a_question_error(app, corpus_settings, question: str) -> None:  # type: ignore[no-untyped-def]
    from askpapers.rag.api import ask_stream

    for call in (app.ask, app.search, lambda q: list(ask_stream(q, settings=corpus_settings))):
        with pytest.raises(QuestionError, match=EMPTY) as err:
            call(question)
        assert "\n" not in str(err.value)


def test_overlong_question_names_the_limit(app, corpus_settings) -> None:  # type: ignore[no-untyped-def]
    from askpapers.rag.api import ask_stream
    from askpapers.rag.read.inputs import MAX_QUESTION_CHARS, clean_question

    question = "Which papers use information bottleneck? " + "x" * 100_000
    message = f"the question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}"
    for call in (app.ask, app.search, lambda q: list(ask_stream(q, settings=corpus_settings))):
        with pytest.raises(QuestionError) as err:
            call(question)
        assert str(err.value) == message
    assert clean_question("a" * MAX_QUESTION_CHARS) == "a" * MAX_QUESTION_CHARS
    with pytest.raises(QuestionError, match="the limit is 2,000"):
        clean_question("a" * (MAX_QUESTION_CHARS + 1))


def test_control_characters_are_dropped_and_the_real_question_answered(app) -> None:  # type: ignore[no-untyped-def]
    from askpapers.rag.read.inputs import clean_question

    noisy = "\x1b[1mWhich papers\x00 use infor\x00mation\x1b[31m bottleneck?\x1b[0m\x7f\x07"
    assert clean_question(noisy) == IB
    assert clean_question("\x1b]0;a title\x07\x1bWhich papers\x1b[2K use information bottleneck?\x1b[?25h") == IB
    assert clean_question("Which\x0bpapers\tuse\x1cinformation\r\nbottleneck?") == (
        "Which papers\tuse information\nbottleneck?"  # blank-like controls separate words
    )
    answer = app.ask(noisy)
    assert answer.found and {c.title for c in answer.citations} == IB_PAPERS
    assert answer.text.startswith("Found 6 papers matching “information bottleneck”:")
    assert answer.question == IB
    _verified(answer, app)
    assert [h.paper_id for h in app.search(noisy)] == [h.paper_id for h in app.search(IB)]


@pytest.mark.parametrize("question", ["the of and to in", "The of AND to, in?", "🔥🚀✨", "😀 👍🏽 🇫🇷"])
def test_no_searchable_words(app, question: str) -> None:  # type: ignore[no-untyped-def]
    answer = app.ask(question)
    _no_match(answer)
    assert answer.text == NO_WORDS and answer.nearest == []
    assert app.search(question) == []  # nothing to rank by: no arbitrary "nearest" papers


@pytest.mark.parametrize("question", FTS_SYNTAX)
def test_fts_syntax_is_text(app, question: str) -> None:  # type: ignore[no-untyped-def]
    answer = _answers(app, question)  # a sqlite3.OperationalError (FTS5 syntax error) would fail here
    if not re.search(r"[^\W_]", question):  # punctuation only
        assert answer.text == NO_WORDS and app.search(question) == []


@pytest.mark.parametrize(
    "question",
    [
        "Which papers use information bottleneck OR",
        "Which papers use information bottleneck or?",
        "Which papers use information bottleneck AND",
        'Which papers use "information bottleneck?',
        'Which papers use "information bottleneck" OR?',
        "Which papers use (information bottleneck)?",
        "Which papers use information* bottleneck?",
        "Which papers use information bottleneck? 🤔",
    ],
)
def test_fts_syntax_around_a_real_topic_still_finds_it(app, question: str) -> None:  # type: ignore[no-untyped-def]
    answer = app.ask(question)
    assert answer.found and {c.title for c in answer.citations} == IB_PAPERS
    _verified(answer, app)
    if "*" not in question and "(" not in question:
        assert answer.text.startswith("Found 6 papers matching “information bottleneck”:")


@pytest.mark.parametrize(
    "query",
    [
        "information bottleneck OR",
        '"information bottleneck',
        "NEAR(information bottleneck)",
        "(information) -bottleneck*",
    ],
)
def test_fts_syntax_search_finds_the_topic(app, query: str) -> None:  # type: ignore[no-untyped-def]
    titles = [h.title for h in app.search(query, 10)]
    assert len(IB_PAPERS & set(titles)) >= 4
    if not query.startswith("NEAR"):  # (an upper-case NEAR reads as a word to search for too)
        assert titles[0] in IB_PAPERS
    answer = app.ask(query)
    _verified(answer, app)
    if query.startswith("NEAR"):  # NEAR reads as a word of the topic, and the answer says so
        assert "“NEAR”" in answer.text.split("\n")[0]
    else:  # a factoid: the best sentence of an information-bottleneck paper
        assert answer.found and answer.citations[0].title in IB_PAPERS
        assert "information bottleneck" in answer.citations[0].evidence.lower()


def test_lexical_index_takes_any_string_as_words(app) -> None:  # type: ignore[no-untyped-def]
    from askpapers.vectorstore.lexical import match_expression, phrase_expression

    lex = app.index.lexical
    titles = {p.paper_id: p.title for p in app.papers()}
    word = r"[^\W_]+"
    quoted_words = re.compile(rf'(?:"{word}"(?: OR "{word}")*)?')
    quoted_phrases = re.compile(rf'(?:"{word}(?: {word})*"(?: OR "{word}(?: {word})*")*)?')
    rng = random.Random(7)
    alphabet = "\"*^():-+{}[]',;.?!\\/ NEAROTDab01\x00\x1b\u00e9\u4fe1\u0639\u05d0\U0001f600\u200f\u202e"
    fuzz = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30))) for _ in range(300)]
    for s in [*FTS_SYNTAX, *SQL, CHINESE, ARABIC, HEBREW, "🔥", "", " ", *fuzz]:
        assert quoted_words.fullmatch(match_expression(s)), s
        assert quoted_phrases.fullmatch(phrase_expression([s, "information bottleneck"])), s
        for pid, _ in lex.search(s, 50) + lex.phrase_search([s, "information bottleneck"], 50):
            assert pid in titles
    # Syntax adds nothing: the same words give the same ranking.
    plain = lex.search("information bottleneck", 50)
    assert plain and {titles[p] for p, _ in plain[:8]} >= IB_PAPERS
    for s in [
        "information bottleneck OR",
        '"information bottleneck',
        "(information) AND NOT bottleneck^",
        "-information: *bottleneck",
    ]:
        assert lex.search(s, 50) == plain, s
    for phrase in ['"information bottleneck', "information-bottleneck*", "(information) bottleneck^:"]:
        assert {titles[p] for p, _ in lex.phrase_search([phrase], 50)} == IB_PAPERS, phrase
    assert lex.search("NEAR OR AND NOT", 50) == lex.search("near", 50)  # operators are plain words
    assert lex.phrase_search(["NEAR(information bottleneck)"], 50) == []  # "near information bottleneck"
    assert lex.search(CHINESE, 50) == [] and lex.search("🔥", 50) == []
    # The guard matters: the same strings given to FTS5 raw are syntax errors.
    with sqlite3.connect(f"file:{lex.path}?mode=ro", uri=True) as conn:
        for raw in ['"information bottleneck', "information bottleneck OR", "NEAR(a b", "foo:bar", "*", *SQL[:2]]:
            with pytest.raises(sqlite3.OperationalError):
                conn.execute("SELECT paper_id FROM papers WHERE papers MATCH ?", [raw]).fetchall()


def test_sql_looking_text_changes_nothing(app) -> None:  # type: ignore[no-untyped-def]
    lex = app.index.lexical
    before = (app.ask(IB).to_dict(), [h.paper_id for h in app.search(IB)], app.index.store.count())
    built = lex.built_from()
    for question in SQL:
        answer = _answers(app, question)
        lex.search(question, 50)
        lex.phrase_search([question], 50)
        if question.startswith("'; DROP"):
            _no_match(answer)
            assert answer.text.startswith("No paper in the corpus matches “DROP")
    after = (app.ask(IB).to_dict(), [h.paper_id for h in app.search(IB)], app.index.store.count())
    for d in (before[0], after[0]):
        d.pop("latency_s")
    assert after == before and before[2] == 38
    assert lex.built_from() == built
    with sqlite3.connect(f"file:{lex.path}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT count(*) FROM papers").fetchone() == (38,)


def test_numbers_only_question_abstains(app) -> None:  # type: ignore[no-untyped-def]
    _no_match(app.ask("1 OR 1=1"))


@pytest.mark.parametrize("question", [CHINESE, ARABIC, HEBREW, "信息瓶颈", "🤔❓"])
def test_non_english_questions_abstain(app, question: str) -> None:  # type: ignore[no-untyped-def]
    answer = _answers(app, question)
    _no_match(answer)
    assert answer.text in (NOT_LATIN, NO_WORDS), "an honest message: the offline answerer reads English"


def test_emoji_and_rtl_marks_around_a_real_question(app) -> None:  # type: ignore[no-untyped-def]
    for question in [
        "🔎 Which papers use information bottleneck? 🤔🙏",
        "Which papers use information bottleneck?\u200f",
    ]:
        answer = app.ask(question)
        assert {c.title for c in answer.citations} == IB_PAPERS, question
        assert "Found 6 papers matching “information bottleneck”:" in answer.text
    answer = app.ask("Which papers use عنق الزجاجة المعلوماتي?")  # an Arabic topic in an English question
    _no_match(answer)
    assert answer.text == NOT_LATIN


@pytest.mark.parametrize(("question", "pid"), UNKNOWN_IDS.items())
def test_unknown_paper_id_abstains(app, corpus_settings, question: str, pid: str) -> None:  # type: ignore[no-untyped-def]
    from askpapers.rag.api import ask_stream

    answer = _answers(app, question)
    _no_match(answer)
    assert answer.text == f"No paper with the id {pid} is in the corpus." and answer.nearest == []
    items = list(ask_stream(question, settings=corpus_settings))
    assert items[:-1] == [answer.text] and items[-1].text == answer.text


def test_unknown_paper_id_never_reaches_the_llm(corpus_settings) -> None:  # type: ignore[no-untyped-def]
    """With an LLM configured (here one that is down), an unknown id is still a plain abstention, no fallback."""
    from askpapers.rag.api import AskPapers
    from askpapers.rag.settings import LLMSettings, Settings

    llm = LLMSettings(base_url="http://127.0.0.1:9/v1", api_key="sk-test", max_retries=0, timeout=5)
    app = AskPapers(Settings(store=corpus_settings.store, retrieval=corpus_settings.retrieval, llm=llm))
    answer = app.ask("What does paper 0123456789abcdef propose?")
    _no_match(answer)
    assert answer.mode == "extractive" and answer.notices == []
    # the check above means something: a normal question does try the (unreachable) LLM
    assert "The LLM answer is unavailable" in app.ask(IB).notices[0]


def test_real_paper_ids_and_the_word_id_are_not_flagged(app) -> None:  # type: ignore[no-untyped-def]
    pid = app.papers()[0].paper_id
    for question in [f"What does paper {pid} propose?", "What is the paper id of WaterSIC?", IB]:
        assert "No paper with the id" not in app.ask(question).text, question


def test_ask_stream_yields_text_then_the_answer(corpus_settings) -> None:  # type: ignore[no-untyped-def]
    from askpapers.rag.api import ask_stream
    from askpapers.rag.types import Answer

    for question in ["information bottleneck OR", "'; DROP TABLE papers; --", CHINESE, "the of and to in"]:
        items = list(ask_stream(question, settings=corpus_settings, mode="extractive"))
        assert all(isinstance(i, str) for i in items[:-1]) and isinstance(items[-1], Answer)
        assert "".join(items[:-1]) == items[-1].text


# -- the command line -----------------------------------------------------------------------------------

# (args, return code, text expected: on stdout when 0, else as the one stderr line)
CLI_CASES: dict[str, tuple[list[str], int, str]] = {
    "empty": (["ask", " \t\n "], 1, "askpapers: error: the question is empty"),
    "huge": (
        ["ask", "x" * 100_000],
        1,
        "askpapers: error: the question is 100,000 characters long; the limit is 2,000",
    ),
    "huge-search": (["search", "y " * 50_000], 1, "the limit is 2,000"),
    "stop-words-search": (["search", "the of and to in"], 0, "No papers found."),
    "fts-search": (["search", '"information bottleneck', "--json"], 0, "Information Bottleneck"),
    "control": (["ask", "Which papers use information\x1b[31m bottleneck OR?\x7f", "--json"], 0, "Found 6 papers"),
    "sql": (["ask", "'; DROP TABLE papers; --"], 0, "No paper in the corpus matches “DROP"),
    "unicode": (
        ["ask", f"🤔 {CHINESE} {HEBREW} {ARABIC}", "--json"],
        0,
        "The offline answerer reads English",
    ),
    "unknown-id": (["ask", "What does paper 0123456789abcdef propose?"], 0, "No paper with the id 0123456789abcdef"),
}


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory: pytest.TempPathFactory, embedder) -> dict[str, subprocess.CompletedProcess[str]]:  # type: ignore[no-untyped-def]
    """Every CLI case run once, a few at a time, against a store of its own (embedded, ingested here)."""
    from askpapers.rag.api import AskPapers
    from askpapers.rag.settings import Settings
    from askpapers.vectorstore.config import StoreSettings
    from askpapers.vectorstore.pipeline import ingest

    d = tmp_path_factory.mktemp("cli-bad")
    settings = Settings(store=StoreSettings(data_dir=d, default_corpus=CORPUS))
    assert ingest([CORPUS], settings.store, progress=False, embedder=embedder).added == 38
    AskPapers(settings).index.lexical  # noqa: B018  (build the BM25 index once, before the processes start)
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(d), "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS)}
    for var in [v for v in env if v.startswith("ASKPAPERS_CHROMA_")]:
        env.pop(var)

    def run(args: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(ASKPAPERS), *args], capture_output=True, text=True, env=env, timeout=300)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(CLI_CASES, pool.map(run, (args for args, _, _ in CLI_CASES.values())), strict=True))


@pytest.mark.parametrize("case", CLI_CASES)
def test_cli(cli_results, case: str) -> None:  # type: ignore[no-untyped-def]
    import json

    args, code, expected = CLI_CASES[case]
    proc = cli_results[case]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert proc.returncode == code, proc.stderr
    if code:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("askpapers: error: ") and expected in lines[0]
        assert proc.stdout == ""
        return
    assert expected in proc.stdout
    if "--json" in args:
        data = json.loads(proc.stdout)
        for c in data.get("citations", []):
            assert c["evidence"] and c["evidence"] in c["abstract"]
        if args[0] == "ask" and not data["found"]:
            assert data["citations"] == []
        if case == "control":
            assert {c["title"] for c in data["citations"]} == IB_PAPERS
        if case == "fts-search":
            assert len(IB_PAPERS & {r["title"] for r in data["results"]}) >= 4


# -- the web app --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def web(corpus_settings) -> Iterator[str]:  # type: ignore[no-untyped-def]
    from askpapers.ui.app import launch
    from tests.test_ui import free_port

    _, url, _ = launch(corpus_settings, port=free_port(), block=False)
    yield url.rstrip("/")
    import gradio as gr

    gr.close_all()


def test_http_api(web) -> None:  # type: ignore[no-untyped-def]
    from gradio_client import Client

    client = Client(web + "/", verbose=False)

    def ask(question: str) -> dict[str, Any]:
        result = client.predict(question, None, "extractive", api_name="/ask")
        assert isinstance(result, dict) and "Traceback" not in str(result)
        for c in result["citations"]:
            assert c["evidence"] in c["abstract"]
        if not result["found"]:
            assert result["citations"] == []
        return result

    for question in ["", "  \n "]:
        result = ask(question)
        assert result["error"].startswith(EMPTY) and result["answer"] == ""
    assert ask("z" * 100_000)["error"] == "the question is 100,000 characters long; the limit is 2,000"
    for question in [
        "Which papers\x00 use information\x1b[31m bottleneck?\x7f",
        "Which papers use information bottleneck OR",
    ]:
        result = ask(question)
        assert {c["title"] for c in result["citations"]} == IB_PAPERS, question
    assert ask("the of and to in")["answer"] == NO_WORDS
    for question in ['"', "NEAR(a b)", "title:foo", "*", "AND NOT", *SQL[:2], "🔥🚀", CHINESE, HEBREW]:
        assert "error" not in ask(question), question
    assert ask("'; DROP TABLE papers; --")["found"] is False
    assert ask("What does paper 0123456789abcdef propose?")["answer"] == (
        "No paper with the id 0123456789abcdef is in the corpus."
    )
    assert len(ask(IB)["citations"]) == 6  # the store is intact


def test_chat_in_the_browser(web) -> None:  # type: ignore[no-untyped-def]
    from tests.test_ui import ARGS, CHROMIUM, ask

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(web)
        page.wait_for_selector("#question textarea", timeout=60_000)

        def chat(question: str) -> tuple[str, str]:
            ask(page, question, done="Answer mode|⚠️")
            return str(page.locator("#chat .message").last.inner_text()), str(page.locator("#notice").inner_text())

        page.fill("#question textarea", "   ")
        page.click("#ask")  # said in the notice only: no empty bubble in the chat (issue 16)
        page.wait_for_function("() => /question is empty/.test(document.querySelector('#notice')?.innerText || '')")
        assert page.locator("#chat .message").count() == 0
        reply, notice = chat("Which papers use information bottleneck OR")
        assert "Found 6 papers matching “information bottleneck”" in reply and "Answer mode" in notice
        assert page.locator("#sources details").count() == 6
        reply, _ = chat("'; DROP TABLE papers; --")
        assert "No paper in the corpus matches “DROP" in reply
        reply, _ = chat(CHINESE)
        assert "The offline answerer reads English" in reply
        reply, _ = chat('NEAR(a b) "title:foo')
        assert reply.strip() and "⚠️" not in reply
        body = page.locator("body").inner_text()
        assert "Traceback" not in body and "OperationalError" not in body
        assert page.locator(".toast-body.error").count() == 0
        browser.close()
