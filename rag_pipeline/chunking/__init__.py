"""Chunking by structure: sections from headings (`chunks`), headings recovered from paragraphs
(`paragraph_headings`) and the identity line every chunk of a document carries (`document_identity`)."""
