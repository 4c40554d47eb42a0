"""Retrieval: the index interface and its implementations, hybrid search, fusion, reranking."""
