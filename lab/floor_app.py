"""The floor of the stack: the least a Flask app under gunicorn does for a `/suggest`.

`kashgar bench service --floor` serves this app beside the service, under the same gunicorn
settings, and sends both the same bodies: what the app does is parse the JSON body and answer a
JSON of the size of a novice answer (about 1.5 KB), no search, no model, no state, no logging.
Whatever the service costs above this app's cost per request and its search's own is the
request path's overhead.

    gunicorn -k gthread --threads 32 -w 2 lab.floor_app:app
"""

from __future__ import annotations

from typing import Any

from flask import Flask, jsonify, request

app = Flask(__name__)


def _alternative(caravan: int, option: str, visits: int, reward: float) -> dict[str, Any]:
    what = "draw 2 Standard cards and keep one" if option == "a" else "turn this card over"
    return {
        "decision": {"kind": "select", "caravan": caravan, "option": option},
        "decision_text": f"c{caravan}:{option}",
        "visits": visits,
        "mean_reward": reward,
        "win_prob": None,
        "expected_vp": 5.0,
        "description": f"Patriarch, caravan {caravan + 1}: {what}",
    }


#: An answer of the service's shape and size (a novice answer to a 2-player opening).
ANSWER: dict[str, Any] = {
    "decision": {"kind": "select", "caravan": 1, "option": "b"},
    "decision_text": "c1:b",
    "alternatives": [_alternative(c, o, 3 - k // 4, 0.85 - 0.005 * k)
                     for k, (c, o) in enumerate((c, o) for c in range(3) for o in "ab")],
    "line": ["c1:b"],
    "win_prob": 0.505673,
    "expected_vp": 5.0,
    "iterations": 16,
    "elapsed_ms": 0.0,
    "seed": 0,
    "bot": "floor",
    "player": 1,
    "description": "Patriarch, caravan 2: turn this card over",
    "line_descriptions": ["Patriarch, caravan 2: turn this card over"],
}


@app.post("/suggest")
def suggest() -> Any:
    body = request.get_json()
    return jsonify(dict(ANSWER, level=body.get("level"), seed=body.get("seed", 0), mode="sync"))


@app.get("/healthz")
def healthz() -> Any:
    return jsonify(status="ok")
