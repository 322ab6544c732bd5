"""The course's probe secret: where the split checks' probe seeds come from.

Each notebook's probes are drawn from ``HMAC-SHA256(secret, student \\0 lesson)``: a regrade,
a resumed run or another shard sees the same cases for the same (student, notebook), while a
student who does not have the secret cannot know them. The secret is 32 random bytes in a
file (``--secret FILE``; by default ``.secret`` in the report folder, made on first use,
readable by its owner only). Every shard of a class must be given the same file: reports
record a fingerprint of their secret (never the secret), and ``minigrad-grade merge`` refuses
reports made with different ones.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

__all__ = ["load_secret", "seed_for", "fingerprint"]


def load_secret(path: str | os.PathLike[str], create: bool = True) -> bytes:
    """The secret in ``path``; with ``create``, a new one is written there when it is missing.

    Raises
    ------
    ValueError
        When the file exists but holds fewer than 16 bytes (a truncated or wrong file).
    FileNotFoundError
        When it is missing and ``create`` is False.
    """
    path = Path(path)
    if not path.exists() and create:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass   # another shard made it first
        else:
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(secrets.token_hex(32) + "\n")
    data = path.read_bytes().strip()
    if len(data) < 16:
        raise ValueError(f"--secret {path}: expected at least 16 bytes of secret; got "
                         f"{len(data)}")
    return data


def seed_for(secret: bytes, student: str, notebook: str) -> int:
    """The 128-bit probe seed of one (student, notebook) pair."""
    mac = hmac.new(secret, f"{student}\0{notebook}".encode("utf-8"), hashlib.sha256)
    return int.from_bytes(mac.digest()[:16], "big")


def fingerprint(secret: bytes) -> str:
    """A short public fingerprint of a secret (it tells two secrets apart, and nothing else)."""
    return hmac.new(secret, b"minigrad-grade fingerprint", hashlib.sha256).hexdigest()[:12]
