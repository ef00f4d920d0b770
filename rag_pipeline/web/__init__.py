"""The review screen: a small Starlette application (Jinja2 templates with autoescaping, HTMX
shipped in the package as a static file: no build step, no CDN) over rag_pipeline.review.
`rag-pipeline review serve` runs it with uvicorn on loopback."""
