"""continuity.lineage.artifacts."""
