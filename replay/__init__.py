"""apollo: replay layer."""
