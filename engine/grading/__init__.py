"""Grading answers: the process pool over the pure graders, and the router picking one by name."""
