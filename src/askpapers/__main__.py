"""``python -m askpapers …``: the ``askpapers`` command (:func:`askpapers.ui.cli.main`)."""

from __future__ import annotations

from askpapers.ui.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
