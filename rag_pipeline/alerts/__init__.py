"""Telling people: alerts about failed, gated and cancelled syncs and stale sources, delivered to
a webhook and by e-mail (plain Python; the Dagster sensors in defs/alerts.py decide when)."""
