"""The reference Apache Kafka: its pinned jars (pom.xml), logging config, launcher and pytest fixture."""
