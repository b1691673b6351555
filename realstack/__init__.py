"""The real stack: Maven modules that run real Apache parts in a JVM for conformance tests
(``kafka/``: an Apache Kafka broker in KRaft mode for the CDC stream)."""
