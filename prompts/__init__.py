"""Prompt templates of the LLM answer path, installed as the package ``askpapers.prompts`` (see pyproject.toml)."""
