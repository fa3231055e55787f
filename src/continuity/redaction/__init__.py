"""continuity.redaction."""
