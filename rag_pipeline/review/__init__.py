"""Human review of flagged and rejected answers: the queue, one answer's four parts (question,
passages, draft, citation map), decisions appended with the reviewer's name, and reviewers who
sign in with a password and see only the answers their groups may read. No web and no Dagster
here: the review screen (rag_pipeline.web) and the CLI both call these."""
