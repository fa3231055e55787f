"""``core.digest`` (issue 43 goal 3): the SHA-256 the read commands check kept answers with,
without loading OpenSSL. It must be ``hashlib``'s digest exactly: a kept secret or title row
written by one process is checked by another, whichever implementation each one had."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from continuity.core.digest import sha256, sha256_hex


@pytest.mark.parametrize(
    "data",
    [b"", b"abc", "héllo \ud83d".encode("utf-8", "surrogatepass"), bytes(range(256)) * 600],
)
def test_the_digest_is_hashlibs(data: bytes):
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert sha256_hex(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    part = sha256()
    for i in range(0, len(data), 1000):
        part.update(data[i : i + 1000])
    assert part.hexdigest() == hashlib.sha256(data).hexdigest()


def test_importing_it_loads_no_openssl():
    code = "import sys, continuity.core.digest; print(sorted({'hashlib', '_hashlib'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
