"""continuity."""
