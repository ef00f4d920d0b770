"""Changing the index's embedding model without downtime (issue 26): embed every live chunk with
the new model beside the live vectors, judge both models with the evaluation set, switch in one
transaction, roll back while the old vectors exist, prune explicitly. Plain Python; the CLI
(cli/migrate.py) and the Dagster job (defs/model_migration.py) call it."""
