"""The composition root: settings in, connected event log and wired services out (wiring only)."""
