"""The ``askpapers`` command: ingest, embed, search, ask, chat, eval and serve. A thin layer over :mod:`rag.api`.

This module parses the command line and runs the command (:mod:`ui.commands`), reporting errors in one line.
Heavy modules (chromadb, onnxruntime) are imported only by the commands that need them.
"""

from __future__ import annotations

import argparse
import logging
import os
import select
import signal
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from askpapers.rag import AskPapersError
from askpapers.ui.commands import ALL, cmd_ask, cmd_chat, cmd_embed, cmd_eval, cmd_ingest, cmd_search, cmd_serve, say

log = logging.getLogger("askpapers")


def _k_arg(text: str) -> int | str:
    """``--k``: a whole number (the API checks its range) or ``all``."""
    if text.strip().lower() == ALL:
        return ALL
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k takes a whole number or 'all', not {text!r}") from None


MODES = ["auto", "extractive", "llm"]  # auto: the LLM when OPENAI_API_KEY or OPENAI_BASE_URL is set


def _add_inputs(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    sp.add_argument("--skip-bad", action="store_true", help="skip malformed JSONL lines, do not abort the file")
    sp.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: only on a terminal)",
    )


def _add_filters(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--venue", help="only papers of this venue, e.g. 'ICML 2026'")
    sp.add_argument("--year", type=int, help="only papers of this year")
    sp.add_argument("--has-code", action="store_true", help="only papers with a code link")


def _corpus_commands(sub: Any) -> None:
    sp = sub.add_parser("ingest", help="add abstract files or folders (.txt, .jsonl, .json, .csv) to the store")
    _add_inputs(sp)
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.set_defaults(func=cmd_ingest)
    sp = sub.add_parser(
        "embed", help="embed a corpus once into JSONL with an 'embedding' per record (ingest then skips the model)"
    )
    _add_inputs(sp)
    sp.add_argument("-o", "--out", type=Path, required=True, help="the JSONL to write (a rerun resumes it)")
    sp.set_defaults(func=cmd_embed)


def _add_k(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--k", type=_k_arg, default=None, metavar="N|all",
        help="list at most N papers (default: ASKPAPERS_MAX_LIST, 50); an answer that lists fewer than match "
        "says 'Showing N of M papers'; 'all' lists every paper that matches",
    )  # fmt: skip
    sp.add_argument("--all", dest="k", action="store_const", const=ALL, help="list every paper that matches: --k all")


def _question_commands(sub: Any) -> None:
    sp = sub.add_parser("search", help="list the papers that best match a query")
    sp.add_argument("query")
    sp.add_argument("--k", type=int, default=None, help="number of papers (default: ASKPAPERS_K, 10)")
    sp.add_argument("--json", action="store_true", help="print JSON")
    _add_filters(sp)
    sp.set_defaults(func=cmd_search)
    sp = sub.add_parser("ask", help="answer a question with cited papers")
    sp.add_argument("question")
    sp.add_argument("--mode", choices=MODES, default=None, help="answer mode (default: ASKPAPERS_MODE or auto)")
    _add_k(sp)
    sp.add_argument("--json", action="store_true", help="print JSON: question, answer, mode, found, citations")
    _add_filters(sp)
    sp.set_defaults(func=cmd_ask)
    sp = sub.add_parser("chat", help="interactive chat in the terminal (follow-ups use the history)")
    sp.add_argument("--mode", choices=MODES, default=None, help="answer mode (default: ASKPAPERS_MODE or auto)")
    _add_k(sp)
    _add_filters(sp)
    sp.set_defaults(func=cmd_chat)


def _tool_commands(sub: Any) -> None:
    sp = sub.add_parser("eval", help="score answers and search against a gold set (dev, conference or BEIR)")
    sp.add_argument("gold", type=Path, help="dev_questions.jsonl, gold_questions_*.jsonl or BEIR queries.jsonl")
    sp.add_argument("--corpus", type=Path, nargs="+", help="the corpus (default for dev questions: bundled)")
    sp.add_argument("--pool", type=Path, help="ids of the papers to ingest (conference questions)")
    sp.add_argument("--qrels", type=Path, help="BEIR qrels TSV")
    sp.add_argument("--cache", type=Path, help="where eval stores are kept (default ~/.cache/askpapers/eval)")
    sp.add_argument("--limit", type=int, help="only the first N questions")
    sp.add_argument("--phrasings", action="store_true", help="conference questions: ask each topic in every phrasing")
    sp.add_argument("--json", action="store_true", help="print JSON")
    sp.set_defaults(func=cmd_eval)
    sp = sub.add_parser("serve", help="start the web app (Gradio) at http://127.0.0.1:7860")
    sp.add_argument("--host", default=None, help="interface to bind (default: ASKPAPERS_HOST or 127.0.0.1)")
    sp.add_argument("--port", type=_port, default=None, help="port (default: ASKPAPERS_PORT or 7860)")
    sp.add_argument("--share", action="store_true", help="also open a public Gradio share link (off by default)")
    sp.set_defaults(func=cmd_serve)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {port}")
    return port


def version() -> str:
    """The installed package's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("askpapers")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="askpapers", description="Cited answers about research papers from their abstracts."
    )
    p.add_argument("--version", action="version", version=f"askpapers {version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _corpus_commands(sub)
    _question_commands(sub)
    _tool_commands(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args))
    except AskPapersError as e:
        say(f"askpapers: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("askpapers: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        if not _stdout_closed():  # a pipe other than stdout (a socket): a bug like any other
            return _internal_error()
        # `askpapers ask … | head`: the reader has all it wants. Exit quietly as a Unix tool killed by SIGPIPE
        # would (status 128 + 13); stdout goes to /dev/null so that the exit's final flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except Exception:  # a bug: keep the traceback out of the user's way but available
        return _internal_error()


def _internal_error() -> int:
    """Report the exception being handled in one line, its traceback in ~/.askpapers-error.log; exit status 70."""
    e = sys.exc_info()[1]
    log_path = Path.home() / ".askpapers-error.log"
    try:
        log_path.write_text(traceback.format_exc(), encoding="utf-8")
    except OSError:
        log_path = Path("(not written)")
    say(f"askpapers: internal error: {type(e).__name__}: {e} (traceback in {log_path})", file=sys.stderr)
    return 70


def _stdout_closed() -> bool:
    """Whether stdout is a pipe or socket whose reader has gone (poll reports an error on it)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


if __name__ == "__main__":
    raise SystemExit(main())
