"""The learned evaluation (`LearnedValue`): a small value network over per-seat features, trained by
self-play.

Kashgar's compiled search game computes the model's input for a seat (`features(state, seat)`, the
names in `model_feature_names`) and runs its forward pass at the search's leaves
(`KashgarSearchGame.set_model`), so serving needs neither scikit-learn nor numpy. The model is one
JSON file (`bots/data/value_model.json`, written by `kashgar train`): the layer sizes, every layer's
weights and biases as arrays (the input scaling folded into the first layer), the feature names,
and how it was made (command, games, positions, commit, date).

The input of seat p, seat-relative: p's own block, then a block for each seat after p in turn
order (zeros where the table has fewer seats, padded to three), then the table's part. The value
of seat p is the model's logit that p wins; the search's rewards are the softmax of the seats'
logits, as with the linear evaluation.
"""

from __future__ import annotations

import array
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from bots.evaluate import TunedValue
from bots.features import CARD_PREFIX, FIXED, engine_kind_slugs

MODEL_FILE = Path(__file__).parent / "data" / "value_model.json"
MODEL_FORMAT = 1

# A seat's block: the linear evaluation's features (bots.features.FIXED), then these, in the order
# `KashgarSearchGame._seat_block` writes them (bots/kashgar_eval.py).
SEAT_EXTRA = (
    "res:ginger", "res:cloves", "res:pepper", "res:anise", "res:cinnamon", "res:gold", "res:mules",  # at most 10
    "contracts_done",      # contracts fulfilled
    "wheat_fields",        # of them wheat fields
    "payable_now",         # face-up contracts it can pay for now
    "payable_now_vp",      # the most VP among them
    "payable_cycle",       # face-up contracts missing at most as many units as it has caravan cards
                           # (one use of every card, a unit each: within one caravan cycle)
    "payable_cycle_vp",    # the most VP among them
    "fewest_missing",      # the fewest units missing for a face-up contract (at most 10)
    "turn_order",          # its place in turn order from the start player (0 to 3)
    "seats_before_turn",   # seats to move before its next turn (0: its turn now)
)
SOON_PREFIX = "soon:"      # per card kind: sum over its cards in the seat's caravans of 1 / (1 + place
                           # from the front): 1 at a front, 1/2 one turn of that caravan away, ...
SLOT_NAMES = ("own", "next", "next2", "next3")  # the blocks: the seat, then the seats after it
GLOBAL = (
    "has_next", "has_next2", "has_next3",   # seats at the table after the own one
    "players_2", "players_3", "players_4",
    "round",               # turns ended / players
    "rounds_left",         # (the turn limit - turns ended) / players
    "end_triggered",       # someone has reached 25 VP
    "progress",            # the leader's VP / 25, at most 1
    "standard_deck", "special_deck", "contract_deck",  # cards left in each deck
)
DECK_PREFIX = "deck:"      # per card kind: its cards in the Standard and Special decks (their
                           # composition, which every seat can count; never their order)


def seat_feature_names(kind_slugs: list[str]) -> list[str]:
    """A seat block's names."""
    return (list(FIXED) + list(SEAT_EXTRA) + [CARD_PREFIX + s for s in kind_slugs]
            + [SOON_PREFIX + s for s in kind_slugs])


def model_feature_names(kind_slugs: list[str] | None = None) -> list[str]:
    """Every input of the model, in order, for an engine whose card kinds are `kind_slugs` (default:
    the engine's): `own.vp`, ..., `next.vp`, ..., `table.round`, ..."""
    slugs = engine_kind_slugs() if kind_slugs is None else kind_slugs
    seat = seat_feature_names(slugs)
    return ([f"{slot}.{n}" for slot in SLOT_NAMES for n in seat]
            + [f"table.{n}" for n in list(GLOBAL) + [DECK_PREFIX + s for s in slugs]])


def _core(st: Any) -> Any:
    from bots import build_for

    return _cores(build_for(st).kashgar.__name__)


@lru_cache(maxsize=2)
def _cores(module: str) -> Any:
    import importlib

    return importlib.import_module(module).KashgarSearchGame()


def features(st: Any, seat: int) -> list[float]:
    """Seat `seat`'s input to the model in engine state `st` (either build), as the search computes it."""
    return list(_core(st).model_features(st, seat))


class Model:
    """A value model file: layer sizes, flat weights (each layer's matrix row-major, then its
    biases), the feature names, and its provenance (`doc`)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        if doc.get("format") != MODEL_FORMAT:
            raise ValueError(f"a value model file has format {MODEL_FORMAT}, not {doc.get('format')!r}")
        names = doc.get("features")
        layers = doc.get("layers")
        if not isinstance(names, list) or not isinstance(layers, list) or not layers:
            raise ValueError("a value model file needs 'features' (names) and 'layers' ([{weights, biases}])")
        sizes = [len(names)]
        flat: list[float] = []
        for k, layer in enumerate(layers):
            w, b = layer.get("weights"), layer.get("biases")
            if (not isinstance(w, list) or len(w) != sizes[-1] or not isinstance(b, list)
                    or any(not isinstance(row, list) or len(row) != len(b) for row in w)):
                raise ValueError(f"layers[{k}]: want weights {sizes[-1]} x n and n biases")
            for row in w:
                flat.extend(float(x) for x in row)
            flat.extend(float(x) for x in b)
            sizes.append(len(b))
        if sizes[-1] != 1:
            raise ValueError("the last layer has one output (the logit that the seat wins)")
        self.doc = doc
        self.names = [str(n) for n in names]
        self.sizes = sizes
        self.flat = array.array("d", flat)  # shared by every search's search game (never written)

    def check_engine(self, kind_slugs: list[str] | None = None) -> None:
        """ValueError unless the model reads this engine's features (same names, same order)."""
        want = model_feature_names(kind_slugs)
        if self.names != want:
            diff = next((i for i, (a, b) in enumerate(zip(self.names, want, strict=False)) if a != b),
                        min(len(want), len(self.names)))
            raise ValueError(f"the model's features differ from this engine's at input {diff} "
                             f"({len(self.names)} names, the engine has {len(want)}): train it again")


@lru_cache(maxsize=4)
def load_model(path: str | None = None) -> Model:
    """The shipped value model (`bots/data/value_model.json`), or `path`'s, checked against the engine."""
    with open(path or MODEL_FILE, encoding="utf-8") as fh:
        model = Model(json.load(fh))
    model.check_engine()
    return model


class LearnedValue(TunedValue):
    """Leaves valued by the learned model (`model`, default the shipped file); the rollouts and the
    in-turn greedy choices keep the weights tuned by play (`TunedValue`), which are cheap."""

    def __init__(self, scale: float = 1.0, path: str | None = None) -> None:
        super().__init__(scale)
        self.model = load_model(path)

    def engine_model(self) -> tuple[list[int], array.array]:  # type: ignore[type-arg,override]
        """What `KashgarSearchGame.set_model` takes."""
        return self.model.sizes, self.model.flat

    def values(self, st: Any) -> list[float]:
        core = self._core(st)
        if core.nlayers == 0:
            core.set_model(*self.engine_model())
        return [core.model_logit(st, p) for p in range(st.players)]
