"""The embedding model: its identity without loading it (`identity`, `digest_cache`) and the
lazily loaded encoder (`encoder`)."""

from rag_pipeline.embedding.digest_cache import weights_digest
from rag_pipeline.embedding.encoder import Embedder, embedder_for, load_embedder
from rag_pipeline.embedding.identity import DEFAULT_MODEL_NAME, ModelError, ModelIdentity, resolve_model

__all__ = ["DEFAULT_MODEL_NAME", "Embedder", "ModelError", "ModelIdentity", "embedder_for", "load_embedder", "resolve_model", "weights_digest"]
