"""apollo: handlers layer."""
