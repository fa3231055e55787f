"""continuity.continuation.view."""
