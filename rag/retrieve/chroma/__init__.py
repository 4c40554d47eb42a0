"""The Chroma-backed index by role: the per-revision caches, the store's freshness, paper reads, vector search,
BM25 search and the corpus statistics, each a small class; :class:`rag.retrieve.chroma_index.PaperIndex` composes
them into one :class:`rag.retrieve.index.Index`."""
