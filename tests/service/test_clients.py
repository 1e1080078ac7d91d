"""API keys as configured: a comma-separated list and a TOML or JSON file with per-key limits."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from service.clients import load_keys
from service.config import Settings


def test_keys_from_the_variable_and_a_json_file(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text('{"keys": [{"key": "k-carol", "name": "carol", "sync_seconds": 2, "rate": "5/second"}]}')
    found = load_keys(Settings.from_env({}, {"api_keys": " k1 , k2,", "api_keys_file": str(keys)}))
    assert sorted(found) == ["k-carol", "k1", "k2"]
    carol = found["k-carol"]
    assert (carol.id, carol.sync_seconds, carol.async_seconds, carol.rate) == ("key:carol", 2.0, 3600.0, "5/second")
    # an unnamed key's client: a digest of the whole key, nothing of the key itself
    assert found["k1"].id == "key:" + hashlib.sha256(b"k1").hexdigest()[:16] and found["k1"].rate == ""
    assert not carol.operator and not found["k1"].operator and carol.keyed


@pytest.mark.parametrize(("text", "names"), [
    ('keys = "abc"', "want a `keys` array"),
    ('[[keys]]\nname = "x"', "keys[0] has no `key` string"),
    ('[[keys]]\nkey = "x"\nasync_seconds = -3', "keys[0].async_seconds must be a number >= 0"),
    ("not toml [", "KASHGAR_API_KEYS_FILE="),
    ('[[keys]]\nkey = "x"\nname = ""', "keys[0].name must be a non-empty string"),
])
def test_a_bad_keys_file_is_named(tmp_path: Path, text: str, names: str) -> None:
    keys = tmp_path / "keys.toml"
    keys.write_text(text)
    with pytest.raises(ValueError, match="KASHGAR_API_KEYS_FILE") as err:
        load_keys(Settings.from_env({}, {"api_keys_file": str(keys)}))
    assert names in str(err.value)
