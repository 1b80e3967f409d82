"""The running engine: dispatcher, history cache, projector, supervisor, signals and worker metrics."""
