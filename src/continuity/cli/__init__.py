"""continuity.cli.app."""
