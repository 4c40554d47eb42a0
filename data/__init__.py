"""The bundled corpus, installed as the package ``vectorstore.bundled`` (see pyproject.toml)."""
