"""Evaluation: the eval runs over labelled questions, their metrics, generated phrasings."""
