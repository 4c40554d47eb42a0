"""Reporting: search results, citation exports, the topic map, example questions, derived titles."""
