"""continuity.daemon."""
