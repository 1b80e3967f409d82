"""Settings: defaults, files, environment variables, the reference system's keys, run identity."""
