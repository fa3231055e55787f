"""A search query as the user wrote it (issue 40): words, and phrases in double quotes.

``parse_query('fix "export job" timeout')`` gives the words ``fix``, ``timeout`` and the phrase
``export job``. A phrase must appear in a hit as written: case-folded, runs of white space
equal to one space, at word boundaries (``"export job"`` does not match "exported job" nor
"export jobs"). Words are ``transcripts.memories.query_terms`` (letters and digits, lower-cased,
English stop words dropped), the rule full-text search already uses. A quote left open is
closed at the end of the text. Nothing of a query reaches SQL or FTS syntax.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from continuity.transcripts.memories import query_terms

_QUOTED = re.compile(r'"([^"]*)(?:"|$)')
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Query:
    """``words``: the terms outside quotes; ``phrases``: each quoted text, case-folded and
    white space normalised (empty ones dropped); ``text``: the query as given."""

    words: tuple[str, ...]
    phrases: tuple[str, ...]
    text: str

    @property
    def terms(self) -> list[str]:
        """The words full-text search looks for: every term of the query, phrases' words
        included (a row must hold one of them to be found by words)."""
        return query_terms(self.text.replace('"', " "))

    def matches(self, body: str) -> bool:
        """Whether ``body`` holds every phrase (see the module docstring); True without
        phrases."""
        if not self.phrases:
            return True
        folded = _SPACE.sub(" ", body.casefold())
        return all(_phrase_re(p).search(folded) for p in self.phrases)


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text.casefold()).strip()


@lru_cache(maxsize=256)
def _phrase_re(phrase: str) -> re.Pattern[str]:
    body = re.escape(phrase).replace(r"\ ", " ")
    left = r"(?<!\w)" if phrase[:1].isalnum() or phrase[:1] == "_" else ""
    right = r"(?!\w)" if phrase[-1:].isalnum() or phrase[-1:] == "_" else ""
    return re.compile(left + body + right)


def parse_query(text: str) -> Query:
    """``text`` as words and phrases (see the module docstring)."""
    phrases = tuple(dict.fromkeys(p for p in (_normal(m) for m in _QUOTED.findall(text)) if p))
    rest = _QUOTED.sub(" ", text)
    return Query(tuple(query_terms(rest)), phrases, text)


__all__ = ["Query", "parse_query"]
