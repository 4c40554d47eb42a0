"""The Gradio app (a thin layer over :mod:`rag.api`); it arrives with the UI issue."""

# Refused under its old top-level name (this folder imported from a checkout's root): no module is ever
# loaded under two names.
if __name__ != "askpapers.ui":
    raise ImportError(f"{__name__}: import askpapers.ui (the top-level ui is not this project)")
