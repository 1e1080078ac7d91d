"""What the server checks across a request's fields, said in the OpenAPI document where a JSON
Schema can say it, so that a request valid by the document is one the server takes up:

- /games and /table/new, and a record's (/reviews, /table/load): `variant` names Cut-and-Thrust
  cards; /table's level names are this server's, and /table/new's Elo within the ladder's spans
  that it plays synchronously;
- /reviews: `seats` are seats of the record's game (below its `players`);
- `observer` names a seat of the game: below `players` (/games) or the state's `players`
  (/legal, /apply), and on a view only the view's own seat;
- /suggest: a level without a budget has the level's budget, which must be within this server's
  limits (and within the synchronous limits in mode `sync`), as must an explicit budget in mode
  `sync`.

What a schema cannot say stays the server's 422, with the field's pointer: a state that is
well-formed but impossible, a table's token or record that this service did not make, a decision
that is not legal, a game that is over, a synchronous
search whose `parallel` parts times `time_ms` exceed the synchronous limit, and a Cut-and-Thrust
card named more times than the game has it.
"""

from __future__ import annotations

from typing import Any

SEATS = range(4)


def cross_field(schema: dict[str, Any], rule: dict[str, Any]) -> None:
    """Add `rule` (a constraint across a request's fields) to an object schema, inside `allOf`:
    client generators read a top-level `anyOf` beside `properties` as a union of partial types
    (openapi-python-client made `NewGameRequest` a union of five, none with every field, and
    dropped others), and merge an `allOf` member that adds no properties into the one type."""
    schema.setdefault("allOf", []).append(rule)


def bound_observers(schemas: dict[str, Any]) -> None:
    """`observer`: null, or a seat of the game (and of a view, its own)."""
    cross_field(schemas["NewGameRequest"], {"anyOf": [{"properties": {"observer": {"type": "null"}}}] + [
        {"properties": {"observer": {"const": k}}} if k < 2 else  # 2 players unless `players` says more
        {"required": ["players"], "properties": {"observer": {"const": k}, "players": {"minimum": k + 1}}}
        for k in SEATS
    ]})
    for name in ("LegalRequest", "ApplyRequest"):
        cross_field(schemas[name], {"anyOf": [{"properties": {"observer": {"type": "null"}}}] + [
            {"properties": {"observer": {"const": k},
                            "state": {"properties": {"players": {"minimum": k + 1}, "observer": {"enum": [None, k]}}}}}
            for k in SEATS
        ]})


def bound_variant(schemas: dict[str, Any]) -> None:
    """NewGameRequest's `variant` as a list (or {"additional": list}) of Cut-and-Thrust cards."""
    from engine_ext.carddata import default

    kinds = [k for k in default().kinds if k.deck == "additional"]
    # (how many times each may appear, its copies, is the server's: schemathesis cannot generate
    # from `minContains`)
    cards = {"type": "array", "items": {"enum": [k.slug for k in kinds]}, "maxItems": sum(k.copies for k in kinds),
             "allOf": [{"contains": {"const": k.slug}, "minContains": 0, "maxContains": k.copies} for k in kinds]}
    for branch in schemas["NewGameRequest"]["properties"]["variant"]["anyOf"]:
        if branch.get("type") == "array":
            branch.update(cards)
        elif branch.get("type") == "object":
            branch["properties"]["additional"] = cards
            branch["additionalProperties"] = False  # the server names any other field


def bound_table(schemas: dict[str, Any], settings: Any, budgets: dict[str, tuple[int | None, int | None]],
                ladder: list[tuple[str, float]] | None = None) -> None:
    """The table's requests (`/table/*`): the levels whose budget is within this server's
    synchronous limits (the table's searches are synchronous); a bot's Elo (/table/new) where both
    levels of its mix are (`table_elos`); and a variant as /games takes it (`bound_variant`)."""
    if "TableNewRequest" not in schemas:
        return
    names = [name for name, (iterations, ms) in budgets.items()
             if (iterations or 0) <= settings.sync_max_iterations and (ms or 0) <= settings.sync_max_ms]
    for name, schema in schemas.items():  # a token is Fernet's: URL-safe base64, so within the body limit
        if name.startswith("Table") and "token" in schema.get("properties", {}):
            schema["properties"]["token"]["pattern"] = "^[A-Za-z0-9_=-]+$"
    items = schemas["TableNewRequest"]["properties"]["levels"]["items"]
    branches = []
    for branch in items.get("anyOf", [items]):
        if branch.get("type") == "string":
            branches.append({**branch, "enum": list(names)})
        elif branch.get("type") == "number":
            branches += [{**branch, **span} for span in table_elos(ladder or [], set(names))]
    if "anyOf" in items:
        items["anyOf"] = branches
    else:
        items.update(branches[0])
    schemas["TableHintRequest"]["properties"]["level"]["enum"] = list(names)
    schemas["TableNewRequest"]["properties"]["variant"] = dict(
        schemas["NewGameRequest"]["properties"]["variant"], description=schemas["TableNewRequest"]["properties"]
        ["variant"].get("description", ""))


def table_elos(ladder: list[tuple[str, float]], fit: set[str]) -> list[dict[str, float]]:
    """The Elo a table's bot may play at (`bots.strength.mix_for`: an Elo up to a level's, above the
    level's below it, is the mix of those two; the weakest level's own Elo the mix of the two
    weakest), on `ladder` (its levels with a measured Elo, weakest first) where both levels of the
    mix are in `fit`: the spans of such adjacent levels (those that meet, one), as JSON Schema bounds."""
    spans: list[dict[str, float]] = []
    for i in range(1, len(ladder)):
        (lower, lo), (upper, hi) = ladder[i - 1], ladder[i]
        if lower in fit and upper in fit:
            if spans and spans[-1]["maximum"] == lo:
                spans[-1]["maximum"] = hi
            else:
                spans.append({"minimum" if i == 1 else "exclusiveMinimum": lo, "maximum": hi})
    return spans


def bound_budgets(schemas: dict[str, Any], settings: Any, budgets: dict[str, tuple[int | None, int | None]],
                  default_level: str | None, ladder: list[tuple[str, float]] | None = None) -> None:
    """SuggestRequest: the levels whose own budget this server serves, in any mode and in mode
    sync; an explicit budget in mode sync within the synchronous limits; an `elo` within the
    range of `ladder` (its levels with a measured Elo, weakest first), without a level or a budget,
    and, in each mode, up to the Elo of the last level from the weakest up whose budget it serves."""
    rungs = ladder or []
    elo = schemas["SuggestRequest"]["properties"]["elo"]
    for branch in elo.get("anyOf", []):
        if branch.get("type") == "number":
            if len(rungs) >= 2:
                branch.update(minimum=rungs[0][1], maximum=rungs[-1][1])
            else:  # no range: no elo
                branch.update(minimum=1, maximum=0)
    alone = {"properties": {k: {"type": "null"} for k in ("level", "iterations", "time_ms")}}
    no_elo = {"anyOf": [{"not": {"required": ["elo"]}}, {"properties": {"elo": {"type": "null"}}}]}

    def elo_within(iterations: int, ms: int) -> list[dict[str, Any]]:
        fits = 0
        while fits < len(rungs) and within(budgets.get(rungs[fits][0], (None, None)), iterations, ms):
            fits += 1
        if fits < 2:
            return []
        return [{"required": ["elo"], "properties": {"elo": {"type": "number", "maximum": rungs[fits - 1][1]}}}]

    def within(budget: tuple[int | None, int | None], iterations: int, ms: int) -> bool:
        return (budget[0] or 0) <= iterations and (budget[1] or 0) <= ms

    def levels_within(iterations: int, ms: int) -> dict[str, Any]:
        """A level (or, where the default level fits, none) whose budget is within these limits,
        unless the request gives its own budget."""
        names = [name for name, budget in budgets.items() if within(budget, iterations, ms)]
        given = {"not": {"type": "null"}}  # a budget sent as null is none: the level's then
        level = {"anyOf": [{"required": ["iterations"], "properties": {"iterations": given}},
                           {"required": ["time_ms"], "properties": {"time_ms": given}},
                           {"required": ["level"], "properties": {"level": {"enum": names}}},
                           *elo_within(iterations, ms)]}
        if default_level in names:  # neither a level nor an elo: the default level
            level["anyOf"].append({"allOf": [{"not": {"required": ["level"]}}, no_elo]})
        return level

    sync_budget = {"properties": {"iterations": {"maximum": settings.sync_max_iterations},
                                  "time_ms": {"maximum": settings.sync_max_ms}}}
    schemas["SuggestRequest"]["allOf"] = [
        {"anyOf": [no_elo, alone]},  # an elo comes without a level or a budget
        levels_within(settings.max_iterations, settings.max_ms),
        {"anyOf": [{"properties": {"mode": {"enum": ["async", "auto"]}}},
                   {"allOf": [sync_budget, levels_within(settings.sync_max_iterations, settings.sync_max_ms)]}]},
    ]


def bound_records(schemas: dict[str, Any]) -> None:
    """A record's `variant` (POST /reviews, /table/load) as /games takes it (`bound_variant`: its
    Cut-and-Thrust cards by name); a review's `seats` below the record's `players`."""
    variant = schemas["NewGameRequest"]["properties"]["variant"]
    for schema in schemas.values():
        record = schema.get("properties", {}).get("record", {})
        if "moves" in record.get("properties", {}):
            described = record["properties"]["variant"]
            record["properties"]["variant"] = {**variant, "description": described.get("description", "")}
    cross_field(schemas["ReviewRequest"], {"anyOf": [
        {"properties": {"record": {"properties": {"players": {"const": players}}},
                        "seats": {"items": {"maximum": players - 1}}}}
        for players in range(2, len(SEATS) + 1)
    ]})


def bound_reviews(schemas: dict[str, Any], names: list[str]) -> None:
    """ReviewRequest: `level` names one of this server's levels."""
    schemas["ReviewRequest"]["properties"]["level"]["enum"] = list(names)
