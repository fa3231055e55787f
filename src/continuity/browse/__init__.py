"""Find and look (issue 19): search over every entry of every session (``search``), the
session view model shared by the browser and ``export`` (``view``), and its HTML and Markdown
rendering (``render``, Jinja2 templates in ``templates/``), the browser's usage page
(``usage_view`` over ``continuity.usage``, its SVG charts in ``charts``; issue 44).

Everything shown passes through ``redaction.redact`` unless a caller asks for raw text
(``export --raw``); HTML is rendered with autoescaping on, so transcript text holding HTML or
ANSI escapes is shown, never interpreted.

May import: ``core``, ``store``, ``formats``, ``redaction``, ``checkpoints``, ``transcripts``,
``continuation``, ``lineage``, ``usage``.
"""
