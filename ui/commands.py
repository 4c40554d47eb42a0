"""What each ``askpapers`` command does (ingest, embed, search, ask, chat, eval, serve) and how its results are
printed; :mod:`ui.cli` parses the command line and runs them.

Heavy modules (chromadb, onnxruntime) are imported only by the commands that need them.
"""

from __future__ import annotations

import argparse
import errno
import json
import re
import socket
import sys
from typing import Any

from askpapers.rag import BIDI_CONTROLS, AskPapersError, printable


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    """The filter flags as the API takes them (it validates them)."""
    return {"venue": args.venue, "year": args.year, "has_code": args.has_code or None}


# Characters a terminal may act on that JSON leaves raw (C1 controls, line/paragraph separators, bidi overrides).
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029" + BIDI_CONTROLS + "]")


def json_out(obj: Any) -> None:
    """Print JSON that is exact (every string as it is) and inert on a terminal: such characters are \\u-escaped."""
    text = json.dumps(obj, ensure_ascii=False, indent=2)
    print(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text))


def say(text: str = "", end: str = "\n", file: Any = None) -> None:
    """Print text that came from the corpus or a model: escape sequences and control characters dropped."""
    print(printable(text), end=end, file=file or sys.stdout, flush=end == "")


ALL = "all"


def _k(value: int | str | None) -> int | None:
    """The ``k`` the API takes: ``all`` is as many as one answer may list."""
    from askpapers.rag import MAX_K

    return MAX_K if value == ALL else value  # type: ignore[return-value]


def more_hint(answer: Any, how: str) -> str:
    """ "Showing 2 of 6 papers; add --all to list all 6." under an answer that lists fewer papers than match."""
    from askpapers.rag import MAX_K

    if not answer.more:
        return ""
    shown, total = len(answer.citations), answer.total
    rest = f"all {total:,}" if total <= MAX_K else f"{MAX_K:,} of them (the most one answer lists)"
    return f"Showing {shown:,} of {total:,} papers; {how} to list {rest}."


def _stream_answer(items: Any, screen: Any = None, hint: str = "") -> Any:
    """Show an answer as it is made, then the checked answer, rendered once; return the Answer.

    On a terminal, text that an LLM writes piece by piece is shown live as a draft (see :class:`.terminal.Draft`)
    that the checked answer then replaces; progress goes to stderr.
    """
    from askpapers.rag.types import Answer, Progress
    from askpapers.ui.terminal import Draft, Screen

    screen = screen or Screen()
    with Draft(screen) as draft:
        for item in items:
            if isinstance(item, Progress):  # long work, on stderr so that stdout stays the answer
                say(f"[{item.text}]", file=sys.stderr)
            elif isinstance(item, Answer):
                draft.close()
                _print_answer(item, False, screen, hint)
                return item
            else:
                draft.add(item)
    return None


def _print_answer(answer: Any, as_json: bool, screen: Any = None, hint: str = "") -> None:
    if as_json:
        json_out(answer.to_dict())
        return
    from rich.text import Text

    from askpapers.ui.terminal import BOLD, DIM, Screen, safe, source_line

    screen = screen or Screen()
    screen.markdown(answer.text, [c.title for c in answer.citations])
    for flag in answer.unsupported:
        screen.text(Text("Unsupported by the cited papers: ").append(safe(flag)), gap=True)
    for note in answer.notices:
        screen.text(Text("Note: ").append(safe(note)), gap=True)
    if answer.citations:
        screen.text(Text("Sources", BOLD), gap=True)
        for c in answer.citations:
            screen.hanging(f"[{c.n}]", source_line(c))
    if answer.mode == "llm":
        screen.text(Text(answer.footer(), DIM), gap=True)
    if hint and more_hint(answer, hint):
        screen.text(Text(more_hint(answer, hint), BOLD), gap=True)


def cmd_ingest(args: argparse.Namespace) -> int:
    from askpapers.rag import add_files

    report = add_files(args.paths, skip_bad=args.skip_bad, progress=args.progress)
    if args.json:
        json_out(report.to_dict())
    else:
        for m in report.messages:
            say(m, file=sys.stderr)
        say(report.summary())
    return 0


def cmd_embed(args: argparse.Namespace) -> int:
    from askpapers.rag import default_app

    written, kept = default_app().embed_files(args.paths, args.out, skip_bad=args.skip_bad, progress=args.progress)
    print(f"Wrote {written:,} embedded papers to {args.out}" + (f" ({kept:,} were already there)" if kept else ""))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from askpapers.rag import default_app

    hits = default_app(warm=False).search(args.query, args.k, filters=_filters(args))  # (one question: no warm-up)
    if args.json:
        json_out({"query": args.query, "results": [h.to_dict() for h in hits]})
        return 0
    from rich.text import Text

    from askpapers.rag import clip
    from askpapers.ui.terminal import BOLD, DIM, Screen, safe, title_text

    screen = Screen()
    if not hits:
        screen.text("No papers found.")
    elif all(h.weak for h in hits):
        screen.text(f"No paper states “{safe(args.query)}”; these are only the nearest (weak matches).")
        screen.text()
    width = len(str(len(hits))) + 1
    for i, h in enumerate(hits, start=1):
        head = Text(title_text(h.title), BOLD)
        year = str(h.year) if h.year and str(h.year) not in h.venue else ""
        head.append("".join(f" · {safe(d)}" for d in (h.venue, year, h.url) if d), DIM)
        head.append(f"  (score {h.score:.4f}{', weak match' if h.weak else ''})", DIM)
        screen.hanging(f"{i}.".rjust(width), head)
        body = Text(clip(safe(h.snippet), 300))
        if h.code_urls:
            body.append("  code: " + ", ".join(safe(u) for u in h.code_urls), DIM)
        screen.hanging(" " * width, body)
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from askpapers.rag import default_app

    k = _k(args.k)
    app = default_app(warm=False)  # (one question: no warm-up)
    if args.json:
        _print_answer(app.ask(args.question, mode=args.mode, k=k, filters=_filters(args)), True)
    else:
        _stream_answer(app.ask_stream(args.question, mode=args.mode, k=k, filters=_filters(args)), hint="add --all")
    return 0


def line_editing() -> None:
    """Arrow keys, editing and this session's history for ``input()`` on a terminal (the stdlib's readline; the
    history stays in memory: questions are not written to disk)."""
    if not sys.stdin.isatty():
        return
    try:
        import readline
    except ImportError:  # a Python built without it: plain input() still works
        return
    readline.set_auto_history(True)


CHAT_HELP = (
    "Commands: /help this list · /all the last question again, every paper that matches · "
    "/clear start afresh (follow-ups forget the earlier answers) · /quit leave (or an empty line, or Ctrl-D)"
)


def cmd_chat(args: argparse.Namespace) -> int:
    from askpapers.rag import ask_stream, recent_messages
    from askpapers.ui.terminal import Screen

    history: list[dict[str, Any]] = []
    line_editing()
    screen = Screen()
    print("askpapers chat: ask about the papers; a follow-up such as “Which of those…” narrows the last answer.")
    print("↑ and ↓ recall earlier questions. /help lists the commands; an empty line or Ctrl-D quits.\n")
    while True:
        try:
            question = input("you> ").strip()
        except EOFError:
            print()
            return 0
        command = question.split()[0].lower() if question.startswith("/") else ""  # "/help", "/all", …
        if not question or command in ("/quit", "/exit", "/q"):
            return 0
        k, past = _k(args.k), history
        if command in ("/help", "/?", "/h"):
            say(CHAT_HELP + "\n")
            continue
        if command == "/clear":
            history = []
            say("(started afresh: the next question is not a follow-up)\n")
            continue
        if command == "/all":  # the last question again, for every paper that matches: it replaces that answer
            if len(history) < 2:
                say("(no answer to list in full yet)\n")
                continue
            question, k, past = str(history[-2]["content"]), _k(ALL), history[:-2]
        elif command:
            say(f"Unknown command {printable(command[:40])}: try /help, /all, /clear or /quit.\n")
            continue
        try:
            answer = _stream_answer(
                ask_stream(question, recent_messages(past), mode=args.mode, k=k, filters=_filters(args)),
                screen,
                "type /all",
            )
        except AskPapersError as e:
            say(f"error: {e}\n")
            continue
        print()
        cited = answer.paper_ids  # every matching paper, so a follow-up narrows the whole set
        history = [
            *past,
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer.text, "paper_ids": cited},
        ]


def cmd_eval(args: argparse.Namespace) -> int:
    from askpapers.rag import InputError, default_cache, detect, eval_beir, eval_conference, eval_dev, eval_phrasings
    from askpapers.rag.settings import get_settings

    for path in (args.gold, *(args.corpus or ()), args.pool, args.qrels):
        if path is not None and not path.exists():
            raise InputError(f"file not found: {path}")
    cache = args.cache or default_cache()
    kind = detect(args.gold)
    if kind == "dev":
        corpus = args.corpus or [get_settings().store.default_corpus]
        report = eval_dev(args.gold, corpus, cache)
    elif kind == "conference":
        if not args.corpus or len(args.corpus) != 1:
            raise InputError("conference questions need --corpus CORPUS.jsonl (and usually --pool IDS)")
        if args.phrasings:
            report = eval_phrasings(args.gold, args.corpus[0], args.pool, cache, limit=args.limit)
        else:
            report = eval_conference(args.gold, args.corpus[0], args.pool, cache, limit=args.limit)
    else:
        if not args.corpus or len(args.corpus) != 1 or not args.qrels:
            raise InputError("BEIR queries need --corpus corpus.jsonl and --qrels qrels.tsv")
        report = eval_beir(args.corpus[0], args.gold, args.qrels, cache, limit=args.limit)
    if args.json:
        json_out(report.to_dict())
    else:
        say(report.table())
    return 0


class PortInUseError(AskPapersError):
    """The web app's port is taken."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(
            f"port {port} on {host} is already in use (another askpapers serve?); "
            f"choose another with --port, e.g. `askpapers serve --port {port + 1 if port < 65535 else 8000}`"
        )


def port_free(host: str, port: int) -> bool:
    """Whether ``host:port`` can be bound now (a port of 0 lets the system choose: always free)."""
    if port == 0:
        return True
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return True  # an unknown host is the server's error to report
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: TIME_WAIT is no conflict
        try:
            s.bind(address)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return False
    return True


def cmd_serve(args: argparse.Namespace) -> int:
    from askpapers.rag.settings import get_settings

    ui = get_settings().ui
    host = args.host or ui.host
    port = args.port if args.port is not None else ui.port
    if not port_free(host, port):  # before the store opens and Gradio starts
        raise PortInUseError(host, port)
    from askpapers.ui.app import launch

    try:
        launch(host=args.host, port=args.port, share=args.share)
    except OSError as e:  # taken meanwhile: Gradio says "Cannot find empty port in range: 7860-7860"
        if e.errno == errno.EADDRINUSE or "empty port" in str(e):
            raise PortInUseError(host, port) from None
        raise
    return 0
