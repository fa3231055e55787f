"""``continuity.redaction.lazy_re``: the redaction patterns compile on first use (issue 17) and
answer as compiled patterns do."""

from __future__ import annotations

import re
import subprocess
import sys

from continuity.redaction.lazy_re import LazyPattern, lazy_compile


def test_a_lazy_pattern_answers_as_the_compiled_one():
    source, flags = r"(?P<key>[a-z]+)=(\d+)", re.I
    lazy, real = lazy_compile(source, flags), re.compile(source, flags)
    assert "_compiled" not in lazy.__dict__  # nothing compiled yet
    text = "A=1 bb=22, ccc=x D=4"
    assert lazy.search(text).group("key") == real.search(text).group("key")
    assert "_compiled" in lazy.__dict__ and lazy.compiled() is lazy.compiled()
    assert lazy.match(text).span() == real.match(text).span()
    assert lazy.fullmatch("q=7").groups() == real.fullmatch("q=7").groups()
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.findall(text) == real.findall(text)
    assert lazy.sub("#", text) == real.sub("#", text)
    assert lazy.subn("#", text, count=1) == real.subn("#", text, count=1)
    assert lazy.split(text) == real.split(text)
    assert (lazy.pattern, lazy.flags, lazy.groupindex) == (
        real.pattern,
        real.flags,
        real.groupindex,
    )
    assert lazy.search(text, 4).span() == real.search(text, 4).span()


def test_importing_the_funnel_compiles_no_pattern():
    code = (
        "import re, sys\n"
        "import continuity.redaction.funnel as f, continuity.redaction.keyed as k\n"
        "from continuity.redaction.lazy_re import LazyPattern\n"
        "pats = [v for m in (f, k) for v in vars(m).values() if isinstance(v, LazyPattern)]\n"
        "pats += [p for shapes in f._SHAPE_ANCHORS.values() for _k, p, _o in shapes]\n"
        "eager = [n for m in (f, k) for n, v in vars(m).items() if isinstance(v, re.Pattern)]\n"
        "print(len(pats), sum('_compiled' in p.__dict__ for p in pats), eager)\n"
        "f.redact('the token is sk-ant-' + 'a1' * 15)\n"
        "print(sum('_compiled' in p.__dict__ for p in pats) < len(pats) // 4)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, second = done.stdout.split("\n")[:2]
    count, compiled, eager = first.split(" ", 2)
    assert int(count) > 100 and compiled == "0" and eager == "[]"
    assert second == "True"


def test_the_stand_in_is_a_lazy_pattern():
    from continuity.redaction import funnel

    assert isinstance(funnel._ANCHOR_RE, LazyPattern)


def test_each_anchor_runs_the_handlers_of_every_anchor_it_starts_with():
    """``funnel._DISPATCH``, found among each anchor's own prefixes (issue 43 goal 3), is the
    pairwise rule it replaced: every anchor that ``lit`` starts with, in ``_HANDLERS``' order."""
    from continuity.redaction import funnel

    handlers = funnel._HANDLERS
    pairwise = {
        lit: [h for other, hs in handlers.items() if lit.startswith(other) for h in hs]
        for lit in handlers
    }
    assert pairwise == funnel._DISPATCH
    assert funnel._DISPATCH["authorization"][-1] == "auth"
    assert "kv" in funnel._DISPATCH["authorization"]  # "auth…" is a secret key's stem too
