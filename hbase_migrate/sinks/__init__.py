"""Where WAL edits go besides a target cluster: ``messages`` (one CDC message per row
mutation) and ``kafka`` (:class:`KafkaSink`, a replay target that produces them to Kafka and
returns only once the broker acknowledged every one)."""
