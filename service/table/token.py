"""The table's state as an opaque token: the full game (decks, seed, the bots' cards) goes to the
browser only encrypted and authenticated with Fernet (AES-128-CBC and HMAC-SHA256, from the
`cryptography` package), so the page can neither read nor change it; any web process holding the
key can take the next call."""

from __future__ import annotations

import json
import zlib
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from ..errors import APIError

#: Largest token accepted (its JSON is compressed; a long 4-player game stays far below).
MAX_TOKEN_CHARS = 200_000
#: Largest decompressed payload: a forged token cannot make the service inflate a bomb (it could
#: not pass the HMAC anyway; this bounds a key leaked by mistake).
MAX_PAYLOAD_BYTES = 4_000_000
VERSION = 1


def make_key() -> str:
    """A fresh key, as KASHGAR_TABLE_KEY takes it."""
    return Fernet.generate_key().decode("ascii")


def cipher(keys: str) -> MultiFernet:
    """The cipher of KASHGAR_TABLE_KEY: one Fernet key, or several separated by commas (the first
    seals, every one opens: a key can be rotated without ending the games in play). ValueError
    naming the variable for a key that is not a Fernet key."""
    parts = [k.strip() for k in keys.split(",") if k.strip()]
    if not parts:
        raise ValueError("KASHGAR_TABLE_KEY is empty")
    out = []
    for i, key in enumerate(parts):
        try:
            out.append(Fernet(key.encode("ascii")))
        except (ValueError, UnicodeEncodeError):
            raise ValueError(f"KASHGAR_TABLE_KEY: key {i + 1} is not a Fernet key (32 bytes in url-safe base64; "
                             f"make one with `python3 -c 'from service.table.token import make_key; "
                             f"print(make_key())'`)") from None
    return MultiFernet(out)


def seal(box: MultiFernet, payload: dict[str, Any]) -> str:
    raw = json.dumps(dict(payload, v=VERSION), separators=(",", ":")).encode("utf-8")
    return box.encrypt(zlib.compress(raw, 6)).decode("ascii")


def unseal(box: MultiFernet, token: str, ptr: str = "/token") -> dict[str, Any]:
    """The payload of a token this service sealed; 422 naming `ptr` for any other string (tampered,
    cut short, sealed under another key, or from another version)."""
    if len(token) > MAX_TOKEN_CHARS:
        raise APIError(422, "invalid_token", f"the token is longer than {MAX_TOKEN_CHARS} characters", ptr)
    try:
        packed = box.decrypt(token.encode("ascii"))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_PAYLOAD_BYTES)
        if inflater.unconsumed_tail:
            raise ValueError("payload too large")
        payload = json.loads(raw)
    except (InvalidToken, UnicodeEncodeError):
        raise APIError(422, "invalid_token", "the token was not made by this service, or was changed (start a "
                       "new game, or load its record)", ptr) from None
    except (ValueError, zlib.error):
        raise APIError(422, "invalid_token", "the token's content is unreadable", ptr) from None
    if not isinstance(payload, dict) or payload.get("v") != VERSION:
        raise APIError(422, "invalid_token", "the token is from another version of the table", ptr)
    return payload
