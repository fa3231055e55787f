"""SHA-256 for the read commands' start (issue 43 goal 3): ``sha256`` is ``hashlib.sha256``'s
digest from CPython's own implementation (the ``_sha256`` module, ``_sha2`` from Python 3.12)
where the interpreter has it, else ``hashlib``'s.

Importing ``hashlib`` loads OpenSSL's ``libcrypto`` (``_hashlib``): about 2.5 ms of a 60 ms
``show``, which needs a digest only to check the kept answers of ``redaction.session`` and
``browse.titles`` (the SHA-256 of a title and of the redaction rules, a few kB to ~120 kB).
The built-in module gives the same digests (SHA-256 is one function, FIPS 180-4) and is
what ``hashlib`` itself falls back to without OpenSSL; it is slower per byte (~0.4 ms for
the rules, against ~0.1 ms), which these small inputs never make up for. Bulk hashing (the
importer's raw lines, file heads) keeps ``hashlib``.

Imports nothing of ours.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:  # CPython 3.11 (``_sha2`` from 3.12); a build without them has hashlib's only
        from _sha256 import sha256
    except ImportError:
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` as 64 lowercase hex digits (``hashlib.sha256(data).hexdigest()``)."""
    return sha256(data).hexdigest()


__all__ = ["sha256", "sha256_hex"]
