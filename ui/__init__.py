"""The Gradio app (a thin layer over :mod:`rag.api`); it arrives with the UI issue."""
