"""Titles' LaTeX as plain text: ``$\\ell_2$`` → ``ℓ₂``, for showing titles and for sorting them as shown."""

from __future__ import annotations

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "ell": "ℓ", "infty": "∞",
    "sqrt": "√", "times": "×", "cdot": "·", "pm": "±", "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠",
    "approx": "≈", "sim": "∼", "in": "∈", "to": "→", "rightarrow": "→", "leftarrow": "←", "partial": "∂",
    "nabla": "∇", "sum": "∑", "prod": "∏", "int": "∫", "log": "log", "exp": "exp", "min": "min", "max": "max",
    "star": "⋆", "ast": "∗", "circ": "∘", "dagger": "†", "mid": "|", "ldots": "…", "dots": "…", "cdots": "⋯",
}  # fmt: skip
MATH_DEPTH = 8  # ^{…{…}} nested deeper than this stays as typed
LATEX_MOST = 500  # a longer text is no title: it is left as it is
_SUPER = dict(zip("0123456789+-=()nijkTtpx*", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱʲᵏᵀᵗᵖˣ*", strict=True))
_SUB = dict(zip("0123456789+-=()aeijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True))


def _script(text: str, table: dict[str, str], mark: str) -> str:
    """``text`` raised or lowered with Unicode characters when each has one, else ``^text`` / ``_text``."""
    if text and all(ch in table for ch in text):
        return "".join(table[ch] for ch in text)
    return mark + text


def _math_text(src: str, depth: int = 0) -> str:
    """One ``$…$`` span as text: symbols and Greek letters as Unicode, font commands and braces dropped."""
    if depth > MATH_DEPTH:
        return src
    out: list[str] = []
    i, n = 0, len(src)

    def group() -> str:  # the argument after ^ or _: one {…} group, one command or one character
        nonlocal i
        while i < n and src[i] == " ":
            i += 1
        if i >= n:
            return ""
        if src[i] == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(src[j], 0)
                j += 1
            inner, i = src[i + 1 : j - 1], j
            return _math_text(inner, depth + 1)
        if src[i] == "\\":
            j = i + 1
            while j < n and src[j].isalpha():
                j += 1
            word, i = src[i + 1 : j], max(j, i + 2)
            if not word:
                return src[i - 1]
            return _SYMBOLS[word] if word in _SYMBOLS else group()  # \textrm{Flow}: a style of its argument
        i += 1
        return src[i - 1]

    while i < n:
        ch = src[i]
        if ch == "\\":
            j = i + 1
            while j < n and src[j].isalpha():
                j += 1
            word = src[i + 1 : j]
            if not word:  # an escaped character: \# \% \{ \, (a thin space) …
                if j < n and src[j] not in ",;:! ":
                    out.append(src[j])
                i = j + 1
                continue
            out.append(_SYMBOLS.get(word, ""))  # \mathcal, \bf, \textrm … only style what follows
            while j < n and src[j] == " ":  # (a control word swallows the spaces after it)
                j += 1
            i = j
        elif ch in "^_":
            i += 1
            out.append(_script(group(), _SUPER if ch == "^" else _SUB, ch))
        elif ch in "{}":
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def latex_text(text: str) -> str:
    """A title's ``$…$`` spans as plain Unicode text (``$\\ell_2$`` → ``ℓ₂``, ``$\\bf{\\Phi}_\\textrm{Flow}$`` →
    ``Φ_Flow``); text outside them, and a lone ``$``, stay as they are. The result is text, never markup."""
    if text.count("$") < 2 or len(text) > LATEX_MOST:
        return text
    parts = text.split("$")
    out = [parts[0]]
    for k in range(1, len(parts)):
        if k % 2 == 1 and k < len(parts) - 1:
            out.append(_math_text(parts[k]))
        else:
            out.append(("$" if k % 2 == 1 else "") + parts[k])
    return "".join(out)
