"""Pure folds over a run's events: ``evolve(state, event) -> state``."""
