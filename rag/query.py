"""What kind of question this is, and what topic a "which papers" question asks about."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from vectorstore.text import content_stems, one_line

Kind = Literal["list", "factoid"]

_LIST = re.compile(
    r"^\s*(?:(?:so|and|ok(?:ay)?|please)[,\s]+)?(?:"
    r"(?:which|what)\s+(?:other\s+)?(?:papers?|works?|studies|articles|publications|abstracts|methods|approaches)\b"
    r"|(?:list|show|find|give|name)\s+(?:me\s+)?(?:all\s+|the\s+|any\s+)*(?:papers?|works?|studies|articles)\b"
    r"|(?:are\s+there|is\s+there|do\s+you\s+have)\s+(?:any\s+)?(?:papers?|works?|studies|articles)\b"
    r"|(?:papers?|works?|studies|articles)\s+(?:on|about|that|which|using|with)\b"
    r"|(?:which|what)\s+(?:of\s+(?:those|these|them|the\s+above)|ones?)\b"
    r")",
    re.IGNORECASE,
)
_FOLLOWUP = re.compile(
    r"\b(?:of\s+(?:those|these|them|the\s+above)|among\s+(?:those|these|them)|(?:those|these|them|ones)\s+"
    r"(?:that|which|about|on|using)|which\s+ones?|the\s+above)\b",
    re.IGNORECASE,
)
_PREFIX = re.compile(
    r"^\s*(?:(?:so|and|ok(?:ay)?|please)[,\s]+)?(?:(?:which|what)\s+(?:other\s+)?(?:papers?|works?|studies|articles|publications"
    r"|abstracts|methods|approaches)|(?:list|show|find|give|name)\s+(?:me\s+)?(?:all\s+|the\s+|any\s+)*(?:papers?|works?|"
    r"studies|articles)|(?:are\s+there|is\s+there|do\s+you\s+have)\s+(?:any\s+)?(?:papers?|works?|studies|articles)|"
    r"(?:papers?|works?|studies|articles)|(?:which|what)\s+(?:of\s+(?:those|these|them|the\s+above)|ones?))"
    r"(?:\s+(?:of|among)\s+(?:those|these|them|the\s+above))?",
    re.IGNORECASE,
)
_VERBS = (
    r"(?:that|which|who|or|and|in\s+this\s+corpus|here|in\s+the\s+corpus|do|does|did|are|is|were|was|have|has|"
    r"use|uses|used|using|utili[sz]e|utili[sz]es|apply|applies|applied|applying|employ|employs|employing|leverage|"
    r"leverages|leveraging|study|studies|studied|studying|investigate|investigates|examine|examines|explore|explores|"
    r"deal|deals|dealing|address|addresses|addressing|tackle|tackles|focus|focuses|focusing|concern|concerns|"
    r"build|builds|building|rely|relies|relying|propose|proposes|proposing|introduce|introduces|present|presents|"
    r"develop|develops|mention|mentions|discuss|discusses|involve|involves|involving|consider|considers|consider|"
    r"work|works|working|related|relate|relates|based|center|centre|centered|centred|talk|talks|cover|covers|"
    r"about|on|with|to|upon|around|in|of|for|mainly|also|specifically|explicitly|primarily|the|a|an|any|some|"
    r"new|novel|recent|existing|topic|topics|area|field|problem|problems|subject|idea|notion|concept|method|methods|technique|techniques|framework|"
    r"frameworks|approach|approaches|architecture|architectures|task|tasks)"
)
_LEADING = re.compile(rf"^\s*(?:{_VERBS}(?:\s*,\s*|\s+|$))+", re.IGNORECASE)
# Each branch may start only where a run of blanks starts, so a long run is tried once, not at every blank.
_ALTERNATIVES = re.compile(r"(?<!\s)\s*,\s*(?:or\s+|and\s+)?|(?<!\s)\s+or\s+|(?<!\s)\s+and/or\s+", re.IGNORECASE)


@dataclass
class Question:
    text: str
    kind: Kind
    followup: bool
    topic: str = ""
    alternatives: list[str] = field(default_factory=list)

    @property
    def terms(self) -> list[str]:
        return content_stems(self.topic or self.text)


_END_PUNCT = frozenset(" ?!.…؟？。！\ufe0e\ufe0f")
_TAIL_SEPARATORS = frozenset(",;:/")
# A dangling connective left at the end of a topic ("information bottleneck OR", "… and/or") joins nothing.
_CONNECTIVES = frozenset({"and", "or", "nor", "not", "and/or"})


def _is_tail_symbol(c: str) -> bool:
    return c in _END_PUNCT or c.isspace() or unicodedata.category(c) in ("So", "Sk", "Cf")


def _strip_end(text: str) -> str:
    """Without trailing question marks, full stops, emoji and other symbols (``information bottleneck? 🤔``)."""
    end = len(text)
    while end and _is_tail_symbol(text[end - 1]):
        end -= 1
    return text[:end]


def _trim_tail(text: str) -> str:
    """Without trailing punctuation, symbols and dangling connectives ("X, or?" → "X"), in one backward pass."""
    end = len(text)
    while end:
        c = text[end - 1]
        if _is_tail_symbol(c) or c in _TAIL_SEPARATORS:
            end -= 1
            continue
        start = end
        while start and (text[start - 1].isalpha() or text[start - 1] == "/"):
            start -= 1
        joined = start > 0 and (text[start - 1].isspace() or text[start - 1] in ",;")
        if joined and text[start:end].lower() in _CONNECTIVES:
            end = start
            continue
        break
    return text[:end]


_IN_CORPUS = re.compile(r"(?<!\s)\s+(?:in\s+(?:this|the)\s+(?:corpus|list|collection)|here)$", re.IGNORECASE)


def topic_of(question: str) -> str:
    """The subject of a which-papers question: "Which papers use the Koopman operator?" → "Koopman operator"."""
    q = _strip_end(one_line(question))
    q = _PREFIX.sub("", q, count=1)
    q = _LEADING.sub("", q)
    q = _IN_CORPUS.sub("", q)
    return _trim_tail(q).strip(" ,;:\"'“”")


_PAREN_ACRONYM = re.compile(r"(?<!\s)\s*\(([A-Za-z][A-Za-z0-9-]{1,11})\)")
# Words that name a kind of work rather than a topic: "backdoor attacks or defenses" means backdoor defenses.
_HEADS = frozenset(
    {
        "attacks",
        "attack",
        "defenses",
        "defences",
        "defense",
        "defence",
        "detection",
        "prediction",
        "estimation",
        "generation",
        "methods",
        "models",
        "learning",
        "analysis",
        "approaches",
        "algorithms",
        "benchmarks",
        "datasets",
        "applications",
        "evaluation",
        "training",
        "inference",
        "systems",
        "mitigation",
        "verification",
    }
)
_GENERIC_TAIL = re.compile(
    r"(?<!\s)\s+(?:models?|methods?|approaches|techniques?|algorithms?|frameworks?|reasoning)$", re.I
)


def expand(alternatives: list[str]) -> list[str]:
    """Spell-outs a reader would accept for the same topic.

    - "neural radiance fields (NeRF)" → also "NeRF"; the phrase itself without the parenthesis;
    - "mixture-of-experts models" → also "mixture-of-experts" (a hyphenated term stands on its own);
    - "backdoor attacks or defenses" → "defenses" reads as "backdoor defenses".
    """
    out: list[str] = []
    first_words = alternatives[0].split() if alternatives else []
    for i, alt in enumerate(alternatives):
        words = alt.split()
        if i > 0 and len(words) == 1 and len(first_words) >= 2 and words[0].lower() in _HEADS:
            alt = " ".join([*first_words[:-1], alt])
        m = _PAREN_ACRONYM.search(alt)
        forms = [alt]
        if m:
            plain = _PAREN_ACRONYM.sub("", alt).strip()
            acronym = (m.group(1) + " " + alt[m.end() :].strip()).strip()
            forms = [plain, acronym]
        for f in list(forms):
            short = _GENERIC_TAIL.sub("", f)
            if short != f and ("-" in short or re.fullmatch(r"[A-Z][A-Za-z0-9]+", short)):
                forms.append(short)
        for f in forms:
            if f and f not in out:
                out.append(f)
    return out


def _strip_start(text: str) -> str:
    """Without leading emoji, symbols and direction marks (``🔎 Which papers …``)."""
    while text and (
        text[0].isspace() or text[0] in "\ufe0e\ufe0f" or unicodedata.category(text[0]) in ("So", "Sk", "Cf")
    ):
        text = text[1:]
    return text


def analyse(question: str) -> Question:
    text = one_line(question)
    core = _strip_start(text)
    is_list = bool(_LIST.match(core))
    followup = bool(_FOLLOWUP.search(text))
    if not is_list:
        return Question(text=text, kind="factoid", followup=followup)
    topic = topic_of(core)
    alts = [a.strip(" ,;:") for a in _ALTERNATIVES.split(topic) if content_stems(a)]
    alts = [re.sub(r"^(?:the|a|an)\s+", "", a, flags=re.IGNORECASE) for a in alts]
    return Question(text=text, kind="list", followup=followup, topic=topic, alternatives=expand(alts or [topic]))
