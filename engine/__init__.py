"""apollo: engine layer."""
