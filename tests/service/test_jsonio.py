"""The answers' JSON (`service/jsonio.py`): orjson writes the document Flask's own provider wrote."""

from __future__ import annotations

import dataclasses
import datetime
import json

from flask.json.provider import DefaultJSONProvider

from service import create_app
from service.jsonio import FastJSONProvider


@dataclasses.dataclass
class Point:
    x: int
    y: float


def test_the_answer_is_the_document_flask_s_provider_wrote() -> None:
    app = create_app({"TESTING": True, "log_level": "WARNING"})
    assert isinstance(app.json, FastJSONProvider)
    flask_own = DefaultJSONProvider(app)
    flask_own.sort_keys = False
    doc = {"z": 1, "a": [1.5, None, True], "name": "Gewürzhändler", "when": datetime.datetime(2026, 12, 2, 15, 0),
           "point": Point(1, 2.0), 3: "an int key", "big": 10**30}
    with app.app_context():
        ours, theirs = app.json.response(doc), flask_own.response(doc)
        assert ours.mimetype == theirs.mimetype == "application/json"
        assert json.loads(ours.get_data()) == json.loads(theirs.get_data())
        assert ours.get_data().endswith(b"\n")
        del doc["big"]  # over 64 bits: Flask's provider writes it, as it did; the rest by orjson
        ours = app.json.response(doc)
        assert json.loads(ours.get_data()) == json.loads(flask_own.response(doc).get_data())
        assert list(json.loads(ours.get_data())) == ["z", "a", "name", "when", "point", "3"]  # the app's order
        assert "Gewürzhändler".encode() in ours.get_data()
        app.debug = True  # indented in debug mode, by Flask's provider
        assert b'\n  "z": 1' in app.json.response(doc).get_data()
