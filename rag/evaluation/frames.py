"""Generated wordings of a question about a topic, for metamorphic tests and ``askpapers eval --phrasings``.

A researcher wraps a topic X in a frame: a greeting, a request ("has anyone here worked on X?"), a purpose ("for a
related-work section") and politeness ("thanks!"). Whatever the frame, the answer should cite the same papers as
"Which papers use or study X?". Frames are made by combining parts, not picked one by one, so a test or an
evaluation sees wordings nobody tuned the reader on; :func:`frames` draws a reproducible sample of them.

:data:`PHRASINGS` is the fixed set ``askpapers eval --phrasings`` asks every conference topic in: the shapes of
real questions (request verbs and nouns, purpose clauses, judgements, chat filler, typos, counts, overviews,
examples given with "like" or "such as"), most of them drawn from the same parts.
"""

from __future__ import annotations

import itertools
import random

GREETINGS = (
    "", "Hi!", "Hello,", "Hey there.", "Good morning!", "Hi team,", "Quick question:", "Hello again.", "Hey,",
    "Greetings!", "Hi, hope you're well.", "OK so",
)  # fmt: skip
REQUESTS = (
    "which papers use {x}?", "has anyone here worked on {x}?", "can you point me to work on {x}?",
    "I need references on {x}", "whats out there on {x}", "any good papers about {x}?",
    "I'm collecting papers that study {x}", "what research deals with {x}?", "list the studies on {x}",
    "I'd love to read about {x}", "show me the state-of-the-art in {x}", "is there anything on {x}?",
    "find me everything related to {x}", "who has published on {x}?", "I'm trying to find work that looks at {x}",
    "what do we have on {x}?", "please pull up papers involving {x}", "recommend some reading on {x}",
    "got any pointers to {x} research?", "what are the notable works in {x}?", "do you know papers tackling {x}?",
    "gather the literature on {x}", "which of the papers here are about {x}?", "surface the work done on {x}",
    "help me find papers on {x}", "{x} — what's been done?", "interested in {x}. Suggestions?",
    "my advisor asked me to look at {x}, where do I start?", "what work exists on {x}?",
    "anything interesting on {x} in this batch?", "which submissions in this collection involve {x}?",
    # the verb of the papers' clause, and a noun of a relation to the topic
    "which papers exploit {x}?", "papers that harness {x}, anyone?", "what are the applications of {x}?",
    "any alternatives to {x}?",
)  # fmt: skip
PURPOSES = (
    "", "for a related-work section", "for my thesis", "for a survey I'm writing", "for our reading group",
    "to get up to speed", "for a grant proposal", "for a literature review", "before my meeting tomorrow",
    "for a course I'm teaching", "for a project at work", "as background for a paper",
)  # fmt: skip
# what a request asks of the papers beside their topic: the kind of work, or what it should hold ("ideally with
# experiments"); words that many papers use, whatever their topic (used to train topicality, bench.topicality)
QUALIFIERS = (
    "ideally with experiments", "with code", "with theoretical guarantees", "preferably recent",
    "with strong empirical results", "with benchmarks", "that report real-world evaluations", "with open datasets",
    "especially empirical studies", "with a theoretical analysis", "with ablations", "that compare baselines",
)  # fmt: skip
POLITENESS = ("", "please", "thanks!", "thank you so much", "cheers", "if you can", "much appreciated", "ty", "if any")

PHRASINGS = (
    "{x}", "{x}?", "papers on {x}", "{x} papers", "show me work on {x}", "any papers about {x}?",
    "I'm looking for papers that use {x}, thanks!", "list all papers about {x} please", "can you find research on {x}",
    "got anything on {x}?", "Are there any studies that apply {x}?", "which works deal with {x}",
    "hi! what papers do you have on {x}", "Find me papers using {x}.", "Which papers use {x}? Thanks", "{lower} pls",
    "How many papers use {x}?", "Summarise the papers on {x}", "what's new in {x}?",
    # request verbs and nouns
    "Has anyone here worked on {x}?", "Can you point me to work on {x}?", "I need references on {x}.",
    "Who has published on {x}?", "Please pull up the papers involving {x}.", "Recommend some reading on {x}.",
    "Do you know any papers tackling {x}?", "Surface the work done on {x}.", "Gather the literature on {x}.",
    "What do we have on {x}?", "Which of the papers here are about {x}?", "I'm trying to find work that looks at {x}.",
    # purpose clauses
    "Papers on {x} for a related-work section", "I need papers on {x} for my thesis",
    "For a survey I'm writing: which papers study {x}?", "What should our reading group read on {x}?",
    "Papers about {x}, to get up to speed", "Background reading on {x} for a grant proposal",
    "I'm writing a literature review on {x}; what is there?",
    # judgements
    "Show me the state-of-the-art in {x}", "What are the notable works in {x}?", "the most relevant papers on {x}",
    "important recent work on {x}", "Which papers make progress on {x}?",
    # chat filler
    "whats out there on {x}", "so uh, anything about {x}??", "hmm, {x}... any papers?", "ok what about {x}",
    "Hello again. Is there anything on {x}?", "hey there, got any pointers to {x} research?",
    "Hi team, quick question: any good papers about {x}? Cheers", "{x} - papers please!!",
    # typos
    "whcih papers use {typo}?", "papers on {typo} pls", "any reserach on {x}?",
    # counts and overviews
    "How many papers are there on {x}?", "Count the papers about {x}", "What's the number of papers on {x}?",
    "Give me an overview of {x}", "Compare the approaches to {x}", "What are the main approaches to {x}?",
    # examples given with "like" or "such as"
    "papers on topics like {x}", "work on something such as {x}", "studies of things like {x}, please",
)  # fmt: skip


def typo(topic: str) -> str:
    """The topic with one slip of the fingers: two letters swapped inside its longest word of six letters or more
    (the topic unchanged when it has none)."""
    words = topic.split()
    longest = max(range(len(words)), key=lambda i: (len(words[i]), -i), default=-1)
    if longest < 0 or len(words[longest]) < 6 or not words[longest].isalpha():
        return topic
    w = words[longest]
    i = len(w) // 2
    words[longest] = w[: i - 1] + w[i] + w[i - 1] + w[i + 1 :]
    return " ".join(words)


def fill(template: str, topic: str) -> str:
    return template.format(x=topic, lower=topic.lower(), typo=typo(topic))


def all_frames() -> list[str]:
    """Every combination of the parts, as templates with ``{x}``."""
    out = []
    for greeting, request, purpose, polite in itertools.product(GREETINGS, REQUESTS, PURPOSES, POLITENESS):
        body = request
        if purpose:
            body = body.rstrip("?") + f" {purpose}" + ("?" if body.endswith("?") else "")
        if polite:
            body = body + (" " if body.endswith("?") else ", ") + polite
        text = f"{greeting} {body}".strip()
        out.append(text[0].upper() + text[1:])
    return out


def frames(n: int = 240, seed: int = 0) -> list[str]:
    """A reproducible sample of ``n`` generated frames (templates with ``{x}``)."""
    pool = all_frames()
    return random.Random(seed).sample(pool, min(n, len(pool)))
