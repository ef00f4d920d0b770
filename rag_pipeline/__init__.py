"""rag_pipeline: keeps a retrieval index of company documents true to its sources."""

__version__ = "0.1.0"
