"""continuity.transcripts.session_transcripts."""
