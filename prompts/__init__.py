"""Prompt templates of the LLM answer path, installed as the package ``rag.prompts`` (see pyproject.toml)."""
