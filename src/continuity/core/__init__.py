"""continuity.core."""
