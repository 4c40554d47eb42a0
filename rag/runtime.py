"""The garbage collector of a long-running askpapers server (``askpapers serve``, the web app on its own).

A question allocates many short-lived containers (each candidate's sentences, stems and evidence), so CPython's
default thresholds collect the young generation every 700 allocations and, every so often, walk everything alive:
the embedder, the lexicon, the caches of papers and text data. At 50,000 papers that walk cost 0.2–0.3 s a time
and about a sixth of a first-time ``ask`` (measured with ``gc.callbacks`` over the 44 first-time questions of
``bench.scale``: 3.3 s of 22 s). What is alive once the store is open lives as long as the server, so
:func:`settle` moves it out of the collector's sight (``gc.freeze``) and makes young collections rarer. Nothing is
collected less: reference counting frees what it always freed, and cycles are still found, later.

Only a process that is a server and nothing else calls it (a library call must not retune its host's collector).
"""

from __future__ import annotations

import gc

YOUNG = 20_000  # allocations between collections of the youngest generation (CPython's default: 700)
OLDER = 50  # collections of one generation between collections of the next (CPython's default: 10)


def settle() -> None:
    """Freeze what is alive now (a long-lived server's models, indexes and caches) and collect less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, OLDER, OLDER)
