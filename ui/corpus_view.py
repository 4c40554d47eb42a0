"""The Papers and Map tabs' presentation: the table's rows and the map as one self-contained SVG.

Everything here is text the browser shows, never markup it runs: titles and topic names are escaped into text
nodes and ``data-`` attributes, and the map's script (:data:`MAP_JS`) only ever copies them back as
``textContent``. The map needs no plotting library: points are circles, the papers the last answer cited are
stars drawn on top, each topic's name sits at its centre, and the legend is an HTML list that wraps instead of
being cut off.
"""

from __future__ import annotations

import html
import logging
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

import numpy as np

from askpapers.rag import AskPapers, MapPoint, Paper, printable
from askpapers.ui.render import latex_text

log = logging.getLogger("askpapers")

# Tableau 10 (colour-blind safe); the cited papers are gold stars with a dark outline, not one of these
PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac"]  # fmt: skip
STAR = "#ffd400"
W, H, PAD = 1000, 720, 24
COLUMNS = ["Title", "Venue", "Year", "Code", "ID"]


def title_text(title: str) -> str:
    """A title as one line of plain text, its LaTeX (``$\\ell_2$``) as Unicode."""
    return latex_text(printable(title, newlines=False))


def rows(papers: Iterable[Paper]) -> list[dict[str, object]]:
    """The table's rows; the ID column is hidden on the page (a row's click reads it)."""
    return [
        {"Title": title_text(p.title), "Venue": printable(p.venue, newlines=False), "Year": p.year or "",
         "Code": "✓" if any(u.startswith("https://") for u in p.code_urls) else "", "ID": p.paper_id}
        for p in papers
    ]  # fmt: skip


def code_links(urls: Sequence[str]) -> str:
    links = [
        f"<a href='{html.escape(u, quote=True)}' target='_blank' rel='noopener noreferrer'>{html.escape(u)}</a>"
        for u in urls
        if u.startswith("https://") and " " not in u
    ]
    return f"<p class='meta'>Code: {' · '.join(links)}</p>" if links else ""


def abstract_html(paper: Paper | None, elem_id: str = "abstract-view") -> str:
    """One paper's title, id, venue, year, code links and abstract, all as text."""
    if paper is None:
        return ""
    meta = " · ".join(html.escape(printable(s, newlines=False)) for s in (paper.paper_id, paper.venue) if s)
    if paper.year:
        meta += f" · {paper.year}"
    return (
        f"<div id='{elem_id}'><h3>{html.escape(title_text(paper.title))}</h3><p class='meta'>{meta}</p>"
        f"{code_links(paper.code_urls)}<p>{html.escape(printable(paper.abstract, newlines=False))}</p></div>"
    )


# -- the map ----------------------------------------------------------------------------------------------------
def warm_map(app: AskPapers) -> None:
    """Fit the map's projection in the background when the app starts, so the Map tab does not wait for it."""
    try:
        app.corpus_map()
    except Exception as e:  # (a failure here shows again when the tab asks for the map)
        log.warning("askpapers: the map could not be prepared: %s", e)


def _scale(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """Values into [low, high], the extreme 0.5 % on each side clipped to the edge (so outliers do not squash the
    rest into the centre)."""
    if not len(values):
        return values
    lo, hi = np.percentile(values, [0.5, 99.5]) if len(values) > 200 else (values.min(), values.max())
    if hi - lo < 1e-9:
        return np.full_like(values, (low + high) / 2)
    scaled: np.ndarray = low + (np.clip(values, lo, hi) - lo) / (hi - lo) * (high - low)
    return scaled


def label_spot(xs: np.ndarray, ys: np.ndarray, most: int = 400) -> tuple[float, float]:
    """Where a topic's name goes: the middle of its densest spot (the neighbours, within a tenth of the map's
    width, of the point that has most of them), not the median of points that may lie in several islands."""
    step = max(1, len(xs) // most)
    px, py = xs[::step], ys[::step]
    d2 = (px[:, None] - px[None, :]) ** 2 + (py[:, None] - py[None, :]) ** 2
    near = d2 <= (W / 10) ** 2
    best = int(np.argmax(near.sum(axis=1)))
    return float(px[near[best]].mean()), float(py[near[best]].mean())


def _star(x: float, y: float) -> str:
    pts = []
    for k in range(10):
        r = 11 if k % 2 == 0 else 4.6
        a = -np.pi / 2 + k * np.pi / 5
        pts.append(f"{r * np.cos(a):.1f},{r * np.sin(a):.1f}")
    return f"<g transform='translate({x:.1f} {y:.1f})'><polygon class='star-shape' points='{' '.join(pts)}'/></g>"


def map_key(points: Sequence[MapPoint], cited: Iterable[str], note: str = "") -> str:
    """What a map shows, as a short key: the same points (ids, titles, places, topics) with the same papers starred
    give the same key (within this process), so a page that shows it already need not be sent it again."""
    drawn = hash(tuple((p.paper_id, p.title, p.x, p.y, p.topic) for p in points))
    known = {p.paper_id for p in points}
    starred = hash(tuple(sorted(pid for pid in cited if pid in known)))
    return f"{len(points)}:{drawn:x}:{starred:x}:{hash(note):x}"


def _attr(text: str) -> str:
    return html.escape(text, quote=True)


def map_html(points: Sequence[MapPoint], cited: Collection[str] = (), note: str = "") -> str:
    """The map: an SVG of every paper given (coloured by topic; cited papers as stars on top), the topics named at
    their centres (numbered on a narrow screen), a legend that wraps, and ``note`` (a sample's scope) above it."""
    if not points:
        return "<div class='corpus-map'><p class='meta'>The corpus is empty.</p></div>"
    sizes = Counter(p.topic for p in points)
    topics = [t for t, _ in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))]
    colour = {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(topics)}
    number = {t: i + 1 for i, t in enumerate(topics)}
    xs = _scale(np.array([p.x for p in points], dtype=float), PAD, W - PAD)
    ys = _scale(np.array([-p.y for p in points], dtype=float), PAD, H - PAD)
    dots, stars = [], []
    for i, p in enumerate(points):
        title, topic = _attr(title_text(p.title)), _attr(printable(p.topic, newlines=False))
        data = f"data-id='{_attr(p.paper_id)}' data-title='{title}' data-topic='{topic}'"
        if p.paper_id in cited:
            stars.append(f"<g class='pt cited' {data}>{_star(xs[i], ys[i])}</g>")
        else:
            dots.append(f"<circle class='pt' cx='{xs[i]:.1f}' cy='{ys[i]:.1f}' r='4' fill='{colour[p.topic]}' {data}/>")
    labels: list[str] = []
    boxes: list[tuple[float, float, float]] = []  # (x, y, half width) of the names placed so far
    for t in topics:
        idx = [i for i, p in enumerate(points) if p.topic == t]
        lx, ly = label_spot(xs[idx], ys[idx])
        half = 3.8 * len(t) + 6  # about 13 px letters at the desktop width
        for _ in range(12):  # move a name down until it no longer covers one placed before it
            if not any(abs(lx - bx) < half + bh and abs(ly - by) < 20 for bx, by, bh in boxes):
                break
            ly = min(ly + 21, H - PAD)
        boxes.append((lx, ly, half))
        left, top = 100 * lx / W, 100 * ly / H
        name = html.escape(printable(t, newlines=False))
        labels.append(
            f"<div class='map-label' style='left:{left:.2f}%;top:{top:.2f}%'>"
            f"<span class='num'>{number[t]}</span><span class='name'>{name}</span></div>"
        )
    legend = []
    if stars:
        legend.append(
            f"<li class='cited-entry'><span class='star-key'>★</span>cited in the last answer ({len(stars)})</li>"
        )
    for t in topics:
        legend.append(
            f"<li><span class='swatch' style='background:{colour[t]}'></span><span class='num'>{number[t]}</span>"
            f"{html.escape(printable(t, newlines=False))} ({sizes[t]})</li>"
        )
    svg = (
        f"<svg viewBox='0 0 {W} {H}' preserveAspectRatio='xMidYMid meet' role='img' "
        f"aria-label='Map of {len(points)} papers in {len(topics)} topics'>{''.join(dots)}{''.join(stars)}</svg>"
    )
    said = f"<p class='map-note'>{html.escape(note)}</p>" if note else ""
    return (
        f"<div class='corpus-map'>{said}<ul class='map-legend'>{''.join(legend)}</ul>"
        f"<div class='map-plot'>{svg}{''.join(labels)}<div class='map-tip' hidden></div></div></div>"
    )


MAP_CSS = """
.corpus-map { width: 100%; }
.map-note { margin: 0 0 6px 0; font-size: 0.9em; }
.map-legend { list-style: none; margin: 0 0 8px 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.map-legend li { display: inline-flex; align-items: center; gap: 5px; font-size: 0.9em; }
.map-legend .swatch { width: 11px; height: 11px; border-radius: 50%; display: inline-block; }
.map-legend .num { font-weight: 600; }
.map-legend .star-key { color: #1f2937; background: #ffd400; border-radius: 3px; padding: 0 3px; }
.map-plot { position: relative; width: 100%; aspect-ratio: 1000 / 720; }
.map-plot svg { width: 100%; height: 100%; display: block; }
.map-plot .pt { cursor: pointer; }
.map-plot circle.pt { fill-opacity: 0.78; stroke: #fff; stroke-width: 0.6; }
.map-plot circle.pt:hover { stroke: #111; stroke-width: 2; }
.map-plot .star-shape { fill: #ffd400; stroke: #111; stroke-width: 1.6; }
.map-label { position: absolute; transform: translate(-50%, -50%); pointer-events: none; font-weight: 700;
  font-size: 13px; color: #111; white-space: nowrap; text-shadow: 0 0 3px #fff, 0 0 3px #fff, 0 0 2px #fff; }
.map-label .num { display: none; }
.map-tip { position: absolute; z-index: 5; max-width: 320px; background: rgba(17, 24, 39, 0.94); color: #fff;
  padding: 6px 8px; border-radius: 6px; font-size: 12px; pointer-events: none; overflow-wrap: anywhere; }
.map-tip b { display: block; }
@media (max-width: 700px) {
  .map-plot circle.pt { r: 10; }
  .map-plot .star-shape { transform: scale(1.9); }
  .map-label .name { display: none; }
  .map-label .num { display: inline; background: rgba(255, 255, 255, 0.85); border-radius: 8px; padding: 0 4px; }
}
"""

# Hover shows a point's title and topic (copied as text); a click asks the server for its abstract.
MAP_JS = """
const tip = () => element.querySelector('.map-tip');
const point = (e) => e.target.closest && e.target.closest('.pt');
element.addEventListener('mouseover', (e) => {
  const p = point(e), t = tip();
  if (!t) return;
  if (!p) { t.hidden = true; return; }
  const b = document.createElement('b');
  b.textContent = p.dataset.title || '';
  const s = document.createElement('span');
  s.textContent = p.dataset.topic || '';
  t.replaceChildren(b, s);
  const box = t.parentElement.getBoundingClientRect();
  const x = e.clientX - box.left, y = e.clientY - box.top;
  t.style.left = Math.min(x + 12, Math.max(0, box.width - 330)) + 'px';
  t.style.top = (y + 14) + 'px';
  t.hidden = false;
});
element.addEventListener('mouseleave', () => { const t = tip(); if (t) t.hidden = true; });
element.addEventListener('click', (e) => {
  const p = point(e);
  if (p && p.dataset.id) trigger('click', { paper_id: p.dataset.id });
});
"""

# The ID column is data for a row's click, not for reading: it is not shown. The widths (shares of the table,
# in COLUMN_WIDTHS) leave Venue, Year and Code readable on a phone, with smaller type and padding there.
COLUMN_WIDTHS: list[str | int] = ["56%", "17%", "14%", "13%", "0%"]
PAPERS_CSS = """
#papers th[data-heading="4"], #papers td:nth-child(5), #papers [role="gridcell"][data-col="4"] { display: none; }
@media (max-width: 700px) {
  #papers { font-size: 12px; }
  #papers .cell-wrap { padding-left: 3px !important; padding-right: 3px !important; }
}
"""
