"""askpapers' benchmarks, run as modules from the checkout: ``python -m bench.compare``, ``bench.scale``,
``bench.load``, ``bench.dev_eval``, ``bench.ingest_ratio`` (the Makefile's ``bench*`` targets).

They import the installed project (``rag``, ``vectorstore``); what they share lives in :mod:`bench.harness`.
"""
