"""Every prompt file has exactly the variables its step fills in (a missing or stray one fails at run time)."""

from __future__ import annotations

import pytest

from askpapers.rag.answerers.chain import load_prompt, prompt_variables

VARIABLES = {
    "condense": {"history", "question"},
    "answer": {"context", "language", "question"},
    "map": {"context", "first", "last", "total", "question"},
    "reduce": {"partials", "total", "language", "question"},
    "judge": {"context", "question"},
    "title": {"question"},
}


@pytest.mark.parametrize(("name", "expected"), VARIABLES.items())
def test_prompt_variables(name: str, expected: set[str]) -> None:
    assert prompt_variables(name) == expected


@pytest.mark.parametrize("name", ["condense", "judge"])
def test_json_prompts_show_their_reply_shape(name: str) -> None:
    # the literal braces of the JSON example are doubled in the file, so the template shows them single
    shown = load_prompt(name).replace("{{", "{").replace("}}", "}")
    assert '{"' in shown and "JSON" in shown


def test_every_prompt_file_is_known() -> None:
    from importlib import resources

    files = {
        p.name.removesuffix(".md") for p in resources.files("askpapers.prompts").iterdir() if p.name.endswith(".md")
    }
    assert files - {"README"} == set(VARIABLES)
