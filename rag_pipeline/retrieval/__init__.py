"""Serving the index: hybrid search (`search`), rerank, refusal, and explaining a logged search."""
