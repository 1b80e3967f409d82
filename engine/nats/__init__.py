"""Everything that speaks NATS: the JetStream event log, consumers, streams, the embedded server."""
