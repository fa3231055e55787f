"""continuity.checkpoints.capture."""
