"""An acronym the papers define that is an English word in lower case ("NODEs" of "neural ordinary differential
equations": "nodes") names its long form only as written, or in capitals. Read in any case it had made every paper
on graph nodes meet "neural ODEs" (ICML 2024: 94 papers cited, most of them on graph neural networks). An acronym the
user types in capitals that is such a word ("CLIP") is read as written too; any acronym is itself, never a word it
stems to ("ATS" is not "at")."""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.decide.acronyms import worded_acronym
from askpapers.rag.decide.evidence import states
from tests.conftest import memory_app, with_filler
from tests.test_match import FILLER

PAPERS = {
    "node-def": (
        "Stable solvers",
        "Neural ordinary differential equations (NODEs) model dynamics; we make neural ODEs stable.",
    ),
    "node-adj": (
        "Adjoints",
        "Ordinary differential equations (ODEs) drive the dynamics; we fit neural ODEs with adjoints.",
    ),
    "node-only": ("Fast training", "We accelerate the training of NODEs with an adaptive step size."),
    "node-caps": ("Stiff systems", "NODE models struggle with stiff systems; we regularise their solvers."),
    "ts-def": ("Auxiliary series", "We generate auxiliary time series (ATS) to augment time series forecasting."),
    "ts-only": ("Augmented forecasts", "Forecasting models trained with ATS generalise to new sensors."),
    "ts-at": ("Failure modes", "Language models fail at long contexts and at arithmetic."),
    "graph-0": ("Message passing", "Graph networks pass messages between nodes to classify them."),
    "graph-1": ("Node ranking", "Nodes of a citation graph are ranked by a neural network."),
    "graph-2": ("Sampling", "We sample neighbouring nodes to train a neural network on large graphs."),
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("worded"), with_filler(PAPERS, FILLER), embedder)


def test_an_acronym_that_is_a_word_is_read_as_written_when_the_papers_define_it() -> None:
    assert worded_acronym("NODEs") == "NODE" and worded_acronym("RAG") == "RAG" and worded_acronym("CLIP") == "CLIP"
    assert worded_acronym("LoRA") == worded_acronym("GNNs") == worded_acronym("nodes") == ""
    assert states("We train NODEs fast.", "NODEs", as_written=True)
    assert states("NODE-based models.", "NODEs", as_written=True)
    assert not states("Messages pass between nodes.", "NODEs", as_written=True)
    assert not states("Node ranking in graphs.", "NODEs", as_written=True)
    assert not states("Messages pass between nodes.", "NODEs")  # (typed in capitals too: "CLIP" is not "clip")
    assert not states("We clip the gradients.", "CLIP") and states("CLIP embeds images.", "CLIP")


def test_an_acronym_is_never_a_word_it_stems_to() -> None:
    """ "ATS", which papers on time series define, stems to "at": every paper with "at" in it had met "time series"
    (ICML 2024: 885 papers cited, against 65)."""
    for written in (False, True):
        assert not states("Models fail at scale.", "ATS", as_written=written)
        assert states("We forecast with ATS models.", "ATS", as_written=written)
    assert states("Llama 2 is fine-tuned.", "LLaMA")  # (typed, and no English word: in any case)
    assert not states("Llama 2 is fine-tuned.", "LLaMA", as_written=True)  # (as the papers define it)
    assert states("Two GNNs and a GNN-based model.", "GNN") and states("One GNN.", "GNNs")


def test_papers_on_graph_nodes_do_not_meet_neural_odes(app: Any) -> None:
    cited = {c.paper_id for c in app.ask("Which papers use neural ODEs?", mode="extractive", k=1000).citations}
    assert {"node-def", "node-adj", "node-only", "node-caps"} <= cited, cited
    assert not cited & {"graph-0", "graph-1", "graph-2"}, cited


def test_papers_saying_at_do_not_meet_time_series(app: Any) -> None:
    cited = {c.paper_id for c in app.ask("Which papers use time series?", mode="extractive", k=1000).citations}
    assert {"ts-def", "ts-only"} <= cited, cited
    assert "ts-at" not in cited, cited
