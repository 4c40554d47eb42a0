"""The bundled corpus, installed as the package ``askpapers.bundled`` (see pyproject.toml)."""
