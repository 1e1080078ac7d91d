"""GET /cards: the card data the engine plays with."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from .. import cards as card_data
from .. import levels
from ..models import CardsResponse
from ..openapi import operation

bp = Blueprint("cards", __name__)


@bp.get("/cards")
@operation(
    "/cards",
    "get",
    summary="Card data",
    tag="rules",
    responses={200: ("Every person card and contract (slugs, decks, VP, actions).", CardsResponse)},
)
def cards() -> Response:
    """The card and contract data loaded by the engine (engine_ext/data/cards.toml, or the file
    KASHGAR_CARDS names), and which file that is (`file`: its path and sha256)."""
    data = card_data.cards()
    return jsonify(
        levels.finite(
            {
                "cards": data["cards"],
                "contracts": data["contracts"],
                "count": len(data["cards"]) + len(data["contracts"]),
                "file": card_data.cards_file(),
            }
        )
    )
