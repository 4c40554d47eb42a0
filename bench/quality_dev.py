"""Quality on the dev questions (bundled ICML 2026 corpus): askpapers' ``eval_dev`` against the recipe's top 4."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.harness import BUNDLED, SHARED, Section, f3, log, mark, mean, write_jsonl
from bench.recipe import RECIPE_K, ingested_papers, recipe_answer, recipe_store

if TYPE_CHECKING:
    from askpapers.rag.evaluation.metrics import DevResult

DEV_GOLD = SHARED / "eval" / "dev_questions.jsonl"
KINDS = ("list", "factoid", "none", "followup")
WHAT = {
    "factoid": "factoid: relevant paper first and expected figure in the answer",
    "none": "none: abstains, nothing cited",
    "followup": "followup: cites only right papers, at least one",
}
NOTE = (
    "askpapers' figures are `askpapers.rag.evaluation.evaluate.eval_dev`'s (the same as `askpapers eval "
    "dev_questions.jsonl`); "
    "papers are matched by the first 80 characters of their abstract and scored with "
    "`askpapers.rag.evaluation.metrics.score_dev`. "
    "The recipe's answer is its top 4 documents; for factoids its answer text is taken to be those four "
    "documents (lenient), it has no way to abstain, and it gets a follow-up without the conversation "
    "(the plain recipe keeps no history)."
)


def recipe_scores(items: list[dict[str, Any]], tmp: Path) -> dict[str, DevResult]:
    """The recipe over exactly the records eval_dev ingests, scored like askpapers."""
    from askpapers.rag.evaluation.metrics import score_dev
    from askpapers.vectorstore.embed import get_embedder
    from askpapers.vectorstore.parse import parse_paths

    records = [
        {"id": p.paper_id, "abstract": p.abstract, "venue": p.venue, "year": p.year}
        for p in parse_paths([BUNDLED]).papers
    ]
    papers = ingested_papers(records, tmp, "dev")
    log(f"dev: recipe store of {len(papers)} papers")
    db = recipe_store(papers, tmp / "recipe-dev", get_embedder())
    retriever = db.as_retriever(search_kwargs={"k": RECIPE_K})
    by_id = {p.paper_id: p for p in papers}
    theirs = {}
    for item in items:
        docs = retriever.invoke(item["question"])  # the recipe has no history: a follow-up is asked as it stands
        theirs[str(item["id"])] = score_dev(item, recipe_answer(item["question"], docs, by_id))
    return theirs


def per_question(items: list[dict[str, Any]], ours: dict[str, Any], theirs: dict[str, DevResult]) -> list[str]:
    lines = [
        "| id | kind | askpapers P | R | F1 | ok | recipe top-4 P | R | F1 | ok | question |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for item in items:
        a, r = ours[str(item["id"])], theirs[str(item["id"])]
        lines.append(
            f"| {item['id']} | {item['kind']} | {f3(a['P'])} | {f3(a['R'])} | {f3(a['F1'])} | {mark(bool(a['ok']))} "
            f"| {f3(r.precision)} | {f3(r.recall)} | {f3(r.f1)} | {mark(r.ok)} | {item['question']} |"
        )
    return lines


def summary(
    items: list[dict[str, Any]], ours: dict[str, Any], theirs: dict[str, DevResult], verbatim: float | None
) -> list[str]:
    lines = ["| measure | askpapers (extractive `ask`) | recipe (top 4) |", "| --- | --- | --- |"]
    lists = [i for i in items if i["kind"] == "list"]
    if lists:
        a_f1 = mean([ours[str(i["id"])]["F1"] for i in lists])
        r_f1 = mean([theirs[str(i["id"])].f1 for i in lists])
        lines.append(f"| list questions ({len(lists)}): mean F1 | **{f3(a_f1)}** | {f3(r_f1)} |")
        a_ok = sum(bool(ours[str(i["id"])]["ok"]) for i in lists)
        r_ok = sum(theirs[str(i["id"])].ok for i in lists)
        lines.append(f"| list questions with F1 ≥ 0.85 | {a_ok}/{len(lists)} | {r_ok}/{len(lists)} |")
    for kind in KINDS[1:]:
        group = [i for i in items if i["kind"] == kind]
        if group:
            a_ok = sum(bool(ours[str(i["id"])]["ok"]) for i in group)
            r_ok = sum(theirs[str(i["id"])].ok for i in group)
            lines.append(f"| {WHAT[kind]} | {a_ok}/{len(group)} | {r_ok}/{len(group)} |")
    if verbatim is not None:
        lines.append(f"| evidence sentences verbatim in their abstract | {f3(verbatim)} | (quotes whole abstracts) |")
    return lines


def quality_dev(limit: int | None, cache: Path, tmp: Path) -> Section:
    from askpapers.rag.evaluation.evaluate import eval_dev
    from askpapers.rag.evaluation.metrics import load_jsonl

    sec = Section("Dev questions (bundled ICML 2026 corpus)")
    items = load_jsonl(DEV_GOLD)[:limit]
    gold = DEV_GOLD if limit is None else write_jsonl(tmp / "dev_questions.jsonl", items)
    log(f"dev: askpapers eval_dev over {len(items)} questions")
    report = eval_dev(gold, [BUNDLED], cache)
    ours = {str(r["id"]): r for r in report.rows}
    theirs = recipe_scores(items, tmp)
    verbatim = report.summary.get("evidence verbatim")
    sec.lines += [*per_question(items, ours, theirs), "", *summary(items, ours, theirs, verbatim), "", NOTE]
    return sec
