"""One reasoning episode: parsing replies, rendering prompts, deciding the next step."""
