"""What the web page looks like: its CSS, its script (math typeset with the KaTeX that Gradio ships, chat
scrolling) and the page head. Imported by :mod:`ui.app`."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

LATEX: list[dict[str, str | bool]] = [
    {"left": "$$", "right": "$$", "display": True},
    {"left": "$", "right": "$", "display": False},
    {"left": "\\(", "right": "\\)", "display": False},
]
# (gradio is found, not imported: ui.app imports it once it has set its environment)
_GRADIO = find_spec("gradio")
_ASSETS = Path(str(_GRADIO.origin if _GRADIO else "")).parent / "templates" / "frontend" / "assets"
# Gradio ships KaTeX (with its auto-render and fonts) among its own assets, served by this app: math in the
# sources and the chat is rendered from there, never from a CDN. Without them, math stays as typed.
KATEX_JS = next((p.name for p in sorted(_ASSETS.glob("auto-render-*.js"))), "")
KATEX_CSS = next((p.name for p in sorted(_ASSETS.glob("katex-*.css"))), "")
CSS = """
#sources { max-height: max(240px, min(calc(100vh - 390px), 820px)); }  /* room below it for "Show all", exports */
#sources { overflow-y: auto !important; overscroll-behavior: contain; }
#sources details { border: 1px solid var(--border-color-primary); border-radius: 6px; padding: 2px 8px; }
#sources details { margin: 3px 0; }
#sources summary { cursor: pointer; font-weight: 600; white-space: nowrap; overflow: hidden; }
#sources summary { text-overflow: ellipsis; }
#sources details[open] summary { white-space: normal; }
#sources details.flash { animation: askpapers-flash 2.4s ease-out; }
@keyframes askpapers-flash { 0%, 40% { background: #fff3a3; border-color: #d97706; } 100% { background: none; } }
#sources mark { background: #fff3a3; padding: 0 2px; }
#sources .meta { color: var(--body-text-color-subdued); font-size: 0.9em; }
#sources .flag { color: #b45309; font-size: 0.9em; }
#sources, #chat, #abstract { overflow-wrap: anywhere; word-break: break-word; }
#chat .message-markdown-disabled { white-space: normal; }
#chat .message-markdown-disabled pre { white-space: pre-wrap; }
#chat .message-content ol, #chat .message-content ul { margin: 0.25em 0 !important; padding-left: 1.8em; }
#chat .message-content li { margin: 0.15em 0 !important; line-height: 1.4; }
#chat .message-content li p { margin: 0 !important; }
#exports { min-height: 0; }
#sources-col { position: sticky; top: 8px; align-self: flex-start; }
@media (max-width: 760px) { #sources-col { position: static; } #sources { max-height: 70vh; } }
/* a phone: the answer uses the whole width (no avatar gutter, no inset bubble) */
@media (max-width: 760px) {
  #answer-row, #chat-col { padding-left: 0 !important; padding-right: 0 !important; gap: 8px; }
  #chat .message-row, #chat .message-wrap { padding-left: 0 !important; padding-right: 0 !important; }
  #chat .message-row { margin-left: 0 !important; margin-right: 0 !important; }
  #chat .message-row.bot-row, #chat .message-row .message, #chat .flex-wrap { max-width: 100% !important; }
  #chat .message-row.bot-row { width: 100% !important; }
  #chat .avatar-container { display: none !important; }
  #chat .message { margin-left: 0 !important; margin-right: 0 !important; }
}
#exports .file-preview-holder { max-height: 96px; overflow-y: auto; }
"""
# On the page: a citation [n] opens its source, scrolls the sources panel (not the page) to it and flashes it; a
# new question scrolls the chat to that question, so a long answer is read from its top; math is typeset.
JS = r"""
() => {
  const scroller = (el, root) => {  // the element's scrolling box inside root (never the page)
    for (let p = el.parentElement; p && root.contains(p); p = p.parentElement) {
      const o = getComputedStyle(p).overflowY;
      if ((o === 'auto' || o === 'scroll') && p.scrollHeight > p.clientHeight) return p;
    }
    return null;
  };
  const toTop = (el, root, pad) => {
    const box = scroller(el, root);
    if (box) box.scrollTop += el.getBoundingClientRect().top - box.getBoundingClientRect().top - pad;
  };
  document.addEventListener('click', (e) => {
    const a = e.target.closest ? e.target.closest('a[href^="#source-"]') : null;
    if (!a) return;
    const el = document.getElementById(a.getAttribute('href').slice(1));
    if (!el) return;
    e.preventDefault();
    el.open = true;
    toTop(el, document.getElementById('sources'), 4);
    const r = el.getBoundingClientRect();
    if (r.top < 0 || r.top > window.innerHeight - 40) el.scrollIntoView({block: 'start'});
    el.classList.remove('flash');
    void el.offsetWidth;
    el.classList.add('flash');
  });
  let users = 0;
  const DELIMS = %(latex)s;
  const KATEX = '%(katex)s';
  let render = null;
  const typeset = async () => {
    if (!KATEX) return;
    const roots = [document.getElementById('chat'), document.getElementById('sources')].filter(Boolean);
    if (!roots.some((r) => /\$|\\\(/.test(r.textContent))) return;
    render = render || (await import(new URL('assets/' + KATEX, document.baseURI).href)).default;
    for (const r of roots) {
      r.querySelectorAll('.message, details, p.meta').forEach((el) => {
        if (el.dataset.typeset === el.textContent.length + '') return;
        render(el, {delimiters: DELIMS, throwOnError: false, trust: false, strict: 'ignore', maxExpand: 200});
        el.dataset.typeset = el.textContent.length + '';
      });
    }
  };
  let pending = null;
  new MutationObserver(() => {
    const msgs = document.querySelectorAll('#chat .user-row');
    if (msgs.length > users) toTop(msgs[msgs.length - 1], document.getElementById('chat'), 8);
    users = msgs.length;
    clearTimeout(pending);
    pending = setTimeout(() => typeset().catch(() => {}), 150);
  }).observe(document.body, {childList: true, subtree: true, characterData: true});
}
""".replace("%(latex)s", json.dumps(LATEX)).replace("%(katex)s", KATEX_JS)
HEAD = f'<link rel="stylesheet" href="assets/{KATEX_CSS}">' if KATEX_CSS else ""
# The page's own margins (outside the part that ``css`` reaches, which Gradio scopes): narrow on a phone.
HEAD += "<style>@media (max-width: 760px) { .gradio-container .app { padding-left: 8px; padding-right: 8px; } }</style>"
