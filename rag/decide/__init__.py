"""Deciding: which papers answer a plan, the evidence sentences, and whether a citation holds."""
