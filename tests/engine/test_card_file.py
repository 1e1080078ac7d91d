"""A card file an owner corrects: KASHGAR_CARDS loads it, and a wrong one is refused with the card,
the field and the line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from engine_ext import carddata
from engine_ext.carddata import CardDataError, load_text

TEXT = resources.files("engine_ext").joinpath("data/cards.toml").read_text(encoding="utf-8")
NOBLES = 'slug = "adelige"\nname = "Adelige"\nenglish = "Nobles"\ndeck = "standard"\ncopies = 4\nvp = 1\n'


def _line(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(("old", "new", "card", "field", "says"), [
    ("vp = 1\ncaravan = [[\"pay gold 1\", \"draw special 2\"]]", "vp = \"one\"\ncaravan = [[\"pay gold 1\", "
     "\"draw special 2\"]]", "card 'adelige'", "vp", "vp must be a number or 'wheat'"),
    ('"draw special 2"]]\nparting = ["inc gold 2"]', '"draw specal 2"]]\nparting = ["inc gold 2"]', "card 'adelige'",
     "caravan", "DECK is standard or special, not 'specal'"),
    ('parting = ["inc gold 2"]\nsource = "rules (draw)', 'parting = ["inc gold two"]\nsource = "rules (draw)',
     "card 'adelige'", "parting", "n must be a count or a number 0..9"),
    ('english = "Nobles"\n', 'english = "Nobles"\ncolour = "red"\n', "card 'adelige'", "colour", "unknown field"),
    ('copies = 4\nvp = 1\ncaravan = [["pay gold 1"', 'copies = "four"\nvp = 1\ncaravan = [["pay gold 1"',
     "card 'adelige'", "copies", "copies must be a whole number"),
    ("cost = { pepper = 4 }", "cost = { peper = 4 }", "contract 3", "cost", "unknown resource 'peper'"),
    ('deck = "standard"\ncopies = 4\nvp = 1\ncaravan = [["pay gold 1"',
     'deck = "stnadard"\ncopies = 4\nvp = 1\ncaravan = [["pay gold 1"', "card 'adelige'", "deck", "unknown deck"),
])
def test_a_wrong_card_is_named_with_its_field_and_line(old: str, new: str, card: str, field: str, says: str) -> None:
    assert old in TEXT, old
    text = TEXT.replace(old, new, 1)
    with pytest.raises(CardDataError) as err:
        load_text(text, "mine.toml")
    e = err.value
    changed = next(line for line in new.splitlines() if line not in old.splitlines())
    assert e.line == _line(text, changed) and e.field == field
    assert str(e).startswith(f"mine.toml: line {e.line}: {card}, field {field!r}") and says in str(e), str(e)


def test_a_missing_field_is_named_at_its_card_s_header() -> None:
    text = TEXT.replace(NOBLES, NOBLES.replace('name = "Adelige"\n', ""))
    with pytest.raises(CardDataError) as err:
        load_text(text)
    header = _line(text, 'slug = "adelige"') - 1
    assert err.value.line == header and text.splitlines()[header - 1] == "[[card]]"
    assert "card 'adelige', field 'name': missing 'name'" in str(err.value)


def test_not_toml_says_where() -> None:
    with pytest.raises(CardDataError, match=r"x.toml: not TOML: .*line 2"):
        load_text('[[card]]\nslug = "a" b\n', "x.toml")


def _in_a_process(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.getcwd(), **env})


def test_kashgar_cards_is_the_file_every_part_plays_with(tmp_path: Path) -> None:
    path = tmp_path / "cards.toml"
    path.write_text(TEXT.replace('english = "Nobles"', 'english = "Noblemen"').replace(
        'caravan = [["draw standard 2"], ["turn_self"]]', 'caravan = [["draw standard 3"], ["turn_self"]]'))
    code = ("import json, engine_ext; from engine_ext import words; "
            "g = engine_ext.new_game(2, 1); ev = g.apply('c0:a'); "
            "d = engine_ext.get_engine().data; "
            "print(json.dumps([d.path, d.sha256, words.card_name('adelige'), len(g.legal())]))")
    out = _in_a_process({"KASHGAR_CARDS": str(path)}, code)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got[0] == str(path.resolve()) and got[1] == load_text(path.read_text()).sha256
    assert got[2] == "Noblemen" and got[3] == 3  # three drawn cards to keep one of
    assert carddata.default().sha256 != got[1]  # this process: the package's


def test_a_wrong_kashgar_cards_stops_the_engine_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cards.toml"
    path.write_text(TEXT.replace("cost = { pepper = 4 }", "cost = { peper = 4 }", 1))
    out = _in_a_process({"KASHGAR_CARDS": str(path)}, "import engine_ext; engine_ext.new_game(2, 1)")
    assert out.returncode == 1
    assert f"{path.resolve()}: line {_line(path.read_text(), 'peper')}: contract 3, field 'cost'" in out.stderr
