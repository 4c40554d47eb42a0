"""Gradio's environment, set before gradio is first imported (by :mod:`ui.app`, :mod:`ui.app_events` or
:mod:`ui.app_tabs`): no analytics, no requests to the Hugging Face hub, no server-side rendering."""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_SSR_MODE", "False")
