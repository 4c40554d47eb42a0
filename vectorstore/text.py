"""Text helpers shared by ingestion and answering: sentences as verbatim spans, and matching terms.

Sentences are returned as slices of the original string, so evidence quoted from a sentence
always occurs verbatim in the abstract.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import Stemmer  # PyStemmer: Snowball's C stemmers

# A sentence ends at . ! or ? (optionally followed by closing quotes/brackets), then whitespace,
# then something that can start a sentence. Abbreviations below never end one.
_BOUNDARY = re.compile(r"""[.!?]["'”’)\]*]*(\s+)(?=[\"'“‘(\[*]*[A-Z0-9])""")
# A full stop with no space after it, between a lower-case word and a capitalised one ("design.Traditional"): some
# exports drop the space (14% of one conference's abstracts). A URL, a file or a code name ("nn.Module(") is not one.
_GLUED = re.compile(r"[.!?](?=[A-Z][a-z]|[AI] )")
_GLUED_AFTER = re.compile(r"(?:[A-Za-z][a-z]|[^\s\\]\$)$")  # what comes before it: a word, or inline math
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|et al|vs|cf|Figs?|Eqs?|Secs?|Tabs?|Refs?|Thms?|Apps?|Alg|Prop|Def|Lem|Ch|Vol|pp|resp|approx"
    r"|viz|Dr|Mr|Ms|Prof|Inc|Ltd|Corp|St|No|Nos)\.|\b[A-Za-z]\.)$"
)
_GLUED_NOT = re.compile(r"[/@_\\:=]|\.\S*\.|^www|\.[A-Za-z]+[.(_\d]")  # URLs, paths, e-mails, code, dotted names
_MATH = re.compile(r"\$[^$\n]{1,300}\$")  # inline LaTeX: "$O(n. m)$" holds no sentence end
_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, unify line endings and non-breaking spaces, collapse runs of blanks inside lines."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u00a0", " ").replace("\ufeff", "").replace("\t", " ")
    return re.sub(r"[ \u2000-\u200b\u3000]+", " ", text)


def one_line(text: str) -> str:
    return _WS.sub(" ", text).strip()


# Terminal escape sequences are dropped whole, so "\x1b[31m" leaves no "[31m": CSI (ESC [ … final byte, or the
# one-byte C1 CSI), OSC (ESC ] … BEL or ST: window titles, OSC 52 clipboard writes, hyperlinks), DCS/SOS/PM/APC
# strings; any other ESC is dropped alone (what followed it is then plain text). Each branch starts at an ESC or
# C1 byte and scans forward once.
_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?|\x9b[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?|\x1b",
    re.DOTALL,
)
_BLANK_CONTROL = re.compile(r"[\x0b-\x0d\x1c-\x1f\x85\u2028\u2029]")  # separate words: become a space
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x7f-\x84\x86-\x9f]")  # dropped (one inside a word keeps it whole)
# Bidirectional overrides and isolates can make a title read backwards ("U+202E") on screen: dropped for display.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")


def printable(text: str, *, newlines: bool = True) -> str:
    """Text safe to show on a terminal or a page: no escape sequences, control characters or bidi overrides.

    Tabs stay; line breaks stay when ``newlines`` is set (else they become spaces, as other blank-like controls
    do). Stored text is never changed: this is applied where text is shown.
    """
    text = _CONTROL.sub("", _ESCAPE.sub("", text))
    if newlines:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        text = _BLANK_CONTROL.sub(lambda m: m.group(0) if m.group(0) == "\n" else " ", text)
    else:
        text = _BLANK_CONTROL.sub(" ", text.replace("\r\n", " ").replace("\n", " "))
    return _BIDI.sub("", text)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of ``text``; ``text[start:end]`` is stripped."""
    return list(_sentence_spans(text))


@lru_cache(maxsize=8192)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    math = [m.span() for m in _MATH.finditer(text)]
    ends = [(m.start(1), m.end()) for m in _BOUNDARY.finditer(text)]
    ends += [(m.end(), m.end()) for m in _GLUED.finditer(text) if _glued(text, m.end())]
    ends.sort()
    spans: list[tuple[int, int]] = []
    start, mi = 0, 0
    for end, after in ends:
        if end < start:
            continue
        while mi < len(math) and math[mi][1] <= end - 1:
            mi += 1
        if mi < len(math) and math[mi][0] < end - 1 < math[mi][1] - 1:  # inside $…$
            continue
        if _ABBREV.search(text[max(start, end - 40) : end]):  # abbreviations are short
            continue
        spans.append((start, end))
        start = after
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return tuple(out)


def _glued(text: str, at: int) -> bool:
    """Whether the full stop just before ``at``, with no space after it, ends a sentence: the word around it is a
    plain word, then a capitalised one (not a URL, an e-mail, a path or a dotted code name)."""
    left = text[max(0, at - 40) : at]
    if not _GLUED_AFTER.search(left[:-1]):
        return False
    right = text[at : at + 40]
    word = left.split()[-1] if left.split() and not left.endswith("$.") else "x."  # (inline math: only what follows)
    nxt = right.split()[0] if right.split() else right
    return not _GLUED_NOT.search(word[:-1] + "." + nxt)


QUOTE_MOST = 400  # characters of a sentence quoted as evidence; a longer one is trimmed around its matched words
_WORD = re.compile(r"\S+")


def trim(sentence: str, terms: Sequence[str], limit: int = QUOTE_MOST) -> str:
    """A verbatim run of whole words of ``sentence`` of at most ``limit`` characters, the one holding the most words
    whose stems are in ``terms`` (the earliest such run; the sentence's start when none match). A sentence within
    the limit is returned whole. Linear: one pass of two pointers over the words."""
    if len(sentence) <= limit:
        return sentence
    want = set(terms)
    words = [(m.start(), m.end(), bool(want & set(stems(m.group())))) for m in _WORD.finditer(sentence)]
    best, best_n, n, j = (0, 0), -1, 0, 0
    for i in range(len(words)):
        if j < i:
            j, n = i, 0
        while j < len(words) and words[j][1] - words[i][0] <= limit:
            n += words[j][2]
            j += 1
        if j > i and n > best_n:
            best, best_n = (i, j), n
        if j > i:
            n -= words[i][2]
    if best_n < 0:  # one word longer than the limit
        return sentence[:limit]
    hit = [k for k in range(*best) if words[k][2]] or [0]
    lo, hi = hit[0], hit[-1]  # then the words around the matched ones, a word each side in turn
    grew = True
    while grew:
        grew = False
        if lo > 0 and words[hi][1] - words[lo - 1][0] <= limit:
            lo, grew = lo - 1, True
        if hi + 1 < len(words) and words[hi + 1][1] - words[lo][0] <= limit:
            hi, grew = hi + 1, True
    return sentence[words[lo][0] : words[hi][1]].rstrip(",;:")


def elide(text: str, part: str) -> str:
    """``part`` of ``text`` as shown in a quote: with "…" where it starts or ends inside one of ``text``'s
    sentences (a trimmed quote); unchanged when it is whole sentences, or not found."""
    at = text.find(part)
    if at < 0 or not part:
        return part
    spans = sentence_spans(text)
    starts, ends = {s for s, _ in spans}, {e for _, e in spans}
    return ("" if at in starts else "…") + part + ("" if at + len(part) in ends else "…")


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


# --- terms -------------------------------------------------------------------------------------

STOPWORDS = frozenset(
    """
    a an the of in on for to and or with by from at as is are was were be been being this that these
    those it its their our we us you your they them which what who whom whose how why when where do does
    did done has have had can could should would may might will shall not no than then there here into
    onto over under about via using use used uses paper papers work works study studies studied any all
    some such also both each more most other only own same so too very just between within without upon
    i me my he she his her
    """.split()  # noqa: SIM905
)

_stemmers = threading.local()  # a stemmer keeps its state between calls: one per thread
_ACRONYM_PLURAL = re.compile(r"\b[b-df-hj-np-tv-xz0-9]+s\b")  # (the \b keep search linear)
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")  # the same tokens on ASCII text, without a Unicode class lookup per letter


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    if len(word) > 2 and _ACRONYM_PLURAL.fullmatch(word):  # "llms", "vlms", "gnns" -> singular
        word = word[:-1]
    return str(_stemmer().stemWord(word))


def _stemmer() -> Stemmer.Stemmer:
    """This thread's English Snowball stemmer (PyStemmer, the C implementation: the same stems as the pure-Python
    ``snowballstemmer`` package gives, checked on the corpus vocabulary by the tests and ``bench.stemmer``)."""
    st: Stemmer.Stemmer | None = getattr(_stemmers, "stemmer", None)
    if st is None:
        st = _stemmers.stemmer = Stemmer.Stemmer("english", 0)  # (no cache of its own: stem() has one)
    return st


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits; everything else separates)."""
    low = text.lower()
    return (_ASCII_TOKEN if low.isascii() else _TOKEN).findall(low)


def stems(text: str) -> list[str]:
    return list(map(stem, tokens(text)))


def content_stems(text: str) -> list[str]:
    """Stems of the words that carry meaning (stop-words dropped), in order, without repeats."""
    seen: dict[str, None] = {}
    for t in tokens(text):
        if t not in STOPWORDS and not (len(t) == 1 and not t.isdigit()):
            seen.setdefault(stem(t), None)
    return list(seen)


JOIN_HYPHEN = re.compile(r"(?<=\w)[-\u2010\u2011](?=\w)")


def phrase_forms(text: str) -> set[str]:
    """Space-padded stem strings of ``text``: hyphenated compounds both split and joined."""
    low = text.lower()
    forms = {" " + " ".join(stems(low)) + " "}
    joined = JOIN_HYPHEN.sub("", low)
    if joined != low:
        forms.add(" " + " ".join(stems(joined)) + " ")
    return {f for f in forms if f.strip()}


def contains_phrase(haystack_forms: set[str], phrase: str) -> bool:
    """Whether the phrase occurs (as consecutive stems) in a text given by its :func:`phrase_forms`."""
    needles = phrase_forms(phrase)
    return any(n in h for n in needles for h in haystack_forms)


_PAREN = re.compile(r"(?<!\s)\s+\(([A-Za-z][A-Za-z0-9-]{1,11}?)s?\)")  # one try per run of blanks
_WORD = re.compile(r"[\w-]+")
_WORD_END = re.compile(r"(?<![\w-])[\w-]+$")


def _words_before(text: str, end: int, most: int = 7) -> list[str]:
    """Up to ``most`` whitespace-separated words of word characters or hyphens that end at ``end``."""
    pieces = text[max(0, end - 80 * most) : end].split()[-most:]
    out: list[str] = []
    for piece in reversed(pieces):
        if _WORD.fullmatch(piece):
            out.append(piece)
            continue
        tail = _WORD_END.search(piece)  # "(see models" -> "models", and nothing before it joins on
        if tail:
            out.append(tail.group(0))
        break
    return out[::-1]


@lru_cache(maxsize=8192)
def acronym_definitions(text: str) -> list[tuple[str, str]]:
    """(long form, acronym) pairs a text defines: "graph neural networks (GNNs)" → ("graph neural networks", "GNN").

    The long form is looked for among the (at most seven) words right before each parenthesis, which is
    cheap; a regular expression that matched the words first took a millisecond per abstract.
    """
    out = []
    for m in _PAREN.finditer(text):
        acro = m.group(1)
        letters = [c.lower() for c in acro if c.isalpha() and c.isupper()]
        if len(letters) < 2 or text[m.start() - 1 : m.start()].isspace() or m.start() == 0:
            continue
        words = _words_before(text, m.start())
        # take the shortest tail of the words whose initials (or hyphen-part initials) spell the acronym
        for n in range(1, len(words) + 1):
            tail = words[-n:]
            initials = "".join(part[0].lower() for w in tail for part in w.split("-") if part)
            if initials == "".join(letters) or "".join(w[0].lower() for w in tail) == "".join(letters):
                out.append((" ".join(tail), acro))
                break
    return out
