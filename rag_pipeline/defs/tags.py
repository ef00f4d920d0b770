"""Run tags the queue, the sensors and the runs list use (one place, so they cannot drift)."""

TAG_SOURCE = "rag/source"  # the source a run syncs ("all" for a whole-index run); one run per value at a time
TAG_TRIGGER = "rag/trigger"  # manual (UI launchpad), cli, schedule, sensor
TAG_OUTCOME = "rag/outcome"  # set when a run ends badly (nothing published): gate_failed, crashed or cancelled
ALL_SOURCES = "all"
