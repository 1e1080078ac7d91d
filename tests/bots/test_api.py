"""The bots API the service uses, levels, the arena's statistics, root-parallel search."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from bots import suggest
from bots.ismcts_bot import ISMCTSConfig
from bots.levels import dump_levels, load_levels, load_presets, parse_levels
from bots.parallel import root_parallel
from lab import arena
from lab.bots import make_bot
from lab.toygame import ToyState

KEYS = {"decision", "decision_text", "alternatives", "line", "win_prob", "expected_vp", "iterations",
        "elapsed_ms", "seed", "level", "compiled"}


def test_eight_levels_with_a_monotone_rating() -> None:
    """Eight levels, each measured at least 100 Elo above the one below (`kashgar tune --verify`);
    not a monotone budget: `expert` searches fewer iterations than `advanced` on a better search.
    Every level on the ladder has a rating: `grandmaster`, not measurably stronger than `master`
    (docs/bench/top-level.md), is a preset off it."""
    levels = load_levels()
    assert len(levels) == 8
    assert all(lv.elo is not None for lv in levels)
    assert "grandmaster" in [lv.name for lv in load_presets()]
    elos = [float(lv.elo) for lv in levels if lv.elo is not None]
    assert all(hi - lo >= 100 for lo, hi in zip(elos, elos[1:], strict=False)), elos
    temps = [lv.config.temperature for lv in levels]
    assert temps == sorted(temps, reverse=True)
    # weak the human way: no level chooses more evenly than its own search's visit shares
    assert all(0.0 <= t <= 1.0 for t in temps)
    names = [x["name"] for x in suggest.list_levels()]
    assert names == [lv.name for lv in levels]


def test_level_file_round_trip(tmp_path: Path) -> None:
    levels = load_levels()
    with pytest.raises(dataclasses.FrozenInstanceError):  # shared by every caller: changed only by a copy
        levels[2].elo = 123.4  # type: ignore[misc]
    levels[2] = dataclasses.replace(levels[2], elo=123.4)
    text = dump_levels(levels, "header line")
    p = tmp_path / "levels.toml"
    p.write_text(text)
    again = load_levels(p)
    assert [lv.config for lv in again] == [lv.config for lv in levels]
    assert again[2].elo == 123.4
    with pytest.raises(ValueError):
        parse_levels({"level": [{"name": "x", "bogus": 1}]})


def test_make_bot_specs() -> None:
    assert make_bot("random").name == "random"
    b = make_bot("ismcts:iterations=10,c=0.5")
    assert b.config == ISMCTSConfig(iterations=10, c=0.5)  # type: ignore[attr-defined]
    assert make_bot("novice:iterations=5").config.iterations == 5  # type: ignore[attr-defined]
    # level:NAME, as the docstrings give it (it failed: "bad setting 'expert'"), and with settings
    assert make_bot("level:expert").config == make_bot("expert").config  # type: ignore[attr-defined]
    assert make_bot("level:expert:iterations=7").config.iterations == 7  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="unknown level 'nosuch'"):
        make_bot("level:nosuch")
    with pytest.raises(ValueError):
        make_bot("nonsense")
    for spec in ("ismcts:bogus=1", "greedy:bogus=1", "det:bogus=1", "expert:bogus=1",
                 "random:bogus=1"):
        with pytest.raises(ValueError, match="bogus"):
            make_bot(spec)


@pytest.mark.parametrize("spec, name", [
    ("ismcts:c=abc", "c"), ("ismcts:iterations=-5", "iterations"), ("ismcts:iterations=1.5", "iterations"),
    ("ismcts:rollout=sideways", "rollout"), ("ismcts:eps=2", "eps"), ("ismcts:macro=3", "macro"),
    ("ismcts:scale=0", "scale"), ("expert:temperature=-1", "temperature"), ("det:depth=-1", "depth"),
])
def test_a_setting_of_the_wrong_type_or_range_is_an_error_naming_it(spec: str, name: str) -> None:
    """`ismcts:c=abc` failed deep in the search with a TypeError; `iterations=-5` searched anyway."""
    with pytest.raises(ValueError, match=f"^{name} must be"):
        make_bot(spec)


def test_arena_refuses_impossible_settings() -> None:
    for kw, words in [({"games": 0}, "games"), ({"games": 5, "seed": -1}, "seed"),
                      ({"games": 5, "sprt": (5.0, 0.0, 0.05, 0.05)}, "elo0 < elo1"),
                      ({"games": 5, "sprt": (0.0, 5.0, 0.0, 0.05)}, "alpha")]:
        with pytest.raises(ValueError, match=words):
            arena.run_arena(["random", "greedy"], game="toy", **kw)  # type: ignore[arg-type]


def test_sprt_keeps_its_error_rate_for_wide_hypotheses() -> None:
    """Equal bots, H0 = 0 and H1 = +100 Elo, alpha = beta = 5%: H1 must be accepted about 5% of the
    time at most (the normal approximation accepted it 13% of the time)."""
    import random as rnd

    low, up = arena.sprt_bounds(0.05, 0.05)
    win, loss = arena.sprt_llr([1.0], 0, 100), arena.sprt_llr([0.0], 0, 100)
    rng = rnd.Random(7)
    wrong = 0
    for _ in range(2000):
        llr, steps = 0.0, 0
        while low < llr < up and steps < 20_000:
            llr += win if rng.random() < 0.5 else loss
            steps += 1
        wrong += llr >= up
    assert wrong / 2000 < 0.065


def test_arena_scores_two_bots_on_unequal_seats_fairly() -> None:
    """Two bots in 3-player games sit A, B, A: B's share of the wins is not a head-to-head score
    (identical bots came out at about -120 Elo). The pairwise fit puts identical bots level."""
    rep = arena.run_arena(["random", "random:"], games=600, players=3, game="toy", seed=3)
    e, lo, hi = rep.elo["random:"]
    assert lo < 0.0 < hi and abs(e) < 60, rep.elo
    with pytest.raises(ValueError, match="as many seats"):
        arena.run_arena(["random", "random:"], games=10, players=3, game="toy", sprt=(0.0, 20.0, 0.05, 0.05))
    with pytest.raises(ValueError, match="3 bots for 2 seats"):
        arena.run_arena(["random", "random:", "greedy"], games=10, players=2, game="toy")


def test_a_sweep_on_unequal_seats_has_an_interval_of_its_sample_size() -> None:
    """B wins all 6 three-player games against two A's: its Elo interval used to be zero wide (a
    bootstrap of a sweep is a sweep); it is now the Wilson interval of 6 games, its point the clamp
    of a perfect score."""
    results = [
        arena.GameResult(g, seats, seats.index("B"), [0, 0, 0], 10, 0.0,
                         [seats.index("B")] + [i for i, x in enumerate(seats) if x == "A"])
        for g, seats in enumerate([["A", "B", "A"], ["B", "A", "A"], ["A", "A", "B"]] * 2)
    ]
    rep = arena.summarize(["A", "B", "A"], 3, results, 1.0)
    e, lo, hi = rep.elo["B"]
    assert (e, lo, hi) == arena.elo_with_ci(6, 6) and lo < hi and lo > 0, rep.elo
    assert rep.win_rate["B"][1] == pytest.approx(arena.wilson(6, 6)[0])


def test_a_spec_with_a_time_budget_alone_searches_by_time() -> None:
    import engine_ext

    for spec in ("ismcts:time_ms=40", "det:time_ms=40", "expert:time_ms=40", "level:expert:time_ms=40"):
        cfg = make_bot(spec).config  # type: ignore[attr-defined]
        assert (cfg.iterations, cfg.time_ms) == (0, 40), spec
    both = make_bot("ismcts:time_ms=40,iterations=500").config  # type: ignore[attr-defined]
    assert (both.iterations, both.time_ms) == (500, 40)
    # it spends the time it was given (capped at the default 2,000 iterations, it stopped early)
    an = make_bot("ismcts:time_ms=150").analyse(engine_ext.new_game(players=2, seed=3), seed=1)
    assert an.elapsed_ms >= 140 and an.iterations > 0


def test_analyse_state_answer_shape() -> None:
    import engine_ext

    doc = engine_ext.new_game(players=3, seed=2).to_json()
    seen: list[dict[str, object]] = []
    out = suggest.analyse_state(doc, level="casual", iterations=80, seed=1, progress=seen.append)
    assert KEYS <= set(out)
    assert out["iterations"] == 80 and out["level"] == "casual"
    assert out["line"][0] == out["decision_text"]
    assert sum(a["visits"] for a in out["alternatives"]) == 80
    assert 0.0 <= out["win_prob"] <= 1.0
    stopped = suggest.analyse_state(doc, time_ms=5000, seed=1, should_stop=lambda: True)
    assert stopped["iterations"] < 100000 and stopped["elapsed_ms"] < 3000
    timed = suggest.analyse_state(doc, time_ms=150, seed=1)
    assert timed["elapsed_ms"] < 1500
    with pytest.raises(KeyError):
        suggest.analyse_state(doc, level="nope")
    with pytest.raises(ValueError):
        suggest.analyse_state(doc, iterations=0)


def test_a_position_is_searched_often_and_left_as_it_was() -> None:
    """The service reads a request into one Position and searches it for every part: a search must
    not change the game, and it must answer as `analyse_state` on the document does."""
    import engine_ext

    g = engine_ext.new_game(players=3, seed=6)
    for _ in range(7):
        g.apply(g.legal()[0])
    doc = g.to_json(observer=g.current_player)
    position = suggest.Position.of(engine_ext.from_json(doc), "casual")
    before = position.game.to_json()
    answers = [suggest.search(position, suggest.Budget(120, None, s)) for s in (1, 2, 1)]
    assert position.game.to_json() == before
    for seed, answer in zip((1, 2, 1), answers, strict=True):
        fresh = suggest.analyse_state(doc, level="casual", iterations=120, seed=seed)
        assert dict(answer.to_json(), elapsed_ms=0) == dict(fresh, elapsed_ms=0)
    full = suggest.Position.of(engine_ext.from_json(g.to_json()), "casual")
    assert position.key == full.key  # the view and the full state: one position for the final draw
    with pytest.raises(ValueError):
        suggest.search(position, suggest.Budget(time_ms=0))


def test_the_finished_answer_of_parts_is_their_merge_calibrated_once() -> None:
    """`suggest` searches each budget and finishes: one part is its own answer; several are merged
    (visits add up) with the win chance worked out on the merged mean reward."""
    import engine_ext

    position = suggest.Position.of(engine_ext.new_game(players=2, seed=4), "expert")
    budgets = [suggest.Budget(80, None, 5), suggest.Budget(80, None, 6)]
    whole = suggest.suggest(position, budgets)
    parts = [suggest.search(position, b) for b in budgets]
    assert whole.parts == 2 and whole.seed == 5 and whole.level is position.level
    assert whole.iterations == 160
    merged = suggest.merge(parts, position)
    assert [(a.decision, a.visits) for a in whole.alternatives] == [(a.decision, a.visits) for a in merged.alternatives]
    assert all(a.win_prob is None for a in merged.alternatives) and merged.win_prob is None  # not yet calibrated
    assert whole.win_prob == whole.chosen.win_prob is not None
    one = suggest.suggest(position, budgets[:1])
    assert one.parts == 1 and one.decision == parts[0].decision


def test_no_position_where_there_is_no_decision_to_choose() -> None:
    """A finished game, or a view whose player to move chooses among cards it does not show, is no
    position: the engine says why (`NoDecision.code`) and where."""
    import engine_ext
    from engine_ext.game import NoDecision

    g = engine_ext.new_game(players=2, seed=3)
    while not g.is_terminal:
        g.apply(g.legal_codes()[0])
    with pytest.raises(NoDecision) as over:
        suggest.Position.of(g, "novice")
    assert over.value.code == "game_over" and over.value.pointer == "/game_over"


def test_merge_parts() -> None:
    import engine_ext

    position = suggest.Position.of(engine_ext.new_game(players=2, seed=4), None)
    parts = [suggest.search(position, suggest.Budget(60, None, s)) for s in (1, 2)]
    m = suggest.merge(parts, position)
    assert m.iterations == 120 and m.parts == 2 and m.bot is None
    assert sum(a.visits for a in m.alternatives) == 120
    assert m.decision == m.alternatives[0].decision and m.code == m.alternatives[0].code
    assert m.alternatives[0].visits == max(a.visits for a in m.alternatives)


def test_root_parallel_merges_visits() -> None:
    an = root_parallel(ToyState(2, seed=3), ISMCTSConfig(evaluator="vp"), workers=2, iterations=400, seed=5)
    assert an.iterations == 400
    assert sum(a.visits for a in an.alternatives) == 400
    assert an.code == 512  # draw


def test_statistics() -> None:
    lo, hi = arena.wilson(50, 100)
    assert lo < 0.5 < hi and hi - lo == pytest.approx(0.192, abs=0.01)
    assert arena.elo_of_score(0.5) == pytest.approx(0.0)
    assert arena.elo_of_score(arena.score_of_elo(120.0)) == pytest.approx(120.0)
    e, lo_e, hi_e = arena.elo_with_ci(64, 100)
    assert lo_e < e < hi_e and e == pytest.approx(100.0, abs=1.0)
    low, up = arena.sprt_bounds(0.05, 0.05)
    assert low == pytest.approx(-math.log(19)) and up == pytest.approx(math.log(19))
    assert arena.sprt_llr([1.0] * 600 + [0.0] * 400, 0, 20) > up  # clearly better than elo1
    assert arena.sprt_llr([1.0] * 50 + [0.0] * 50, 0, 20) < 0.0
    # exact Bernoulli likelihood (no draws): 10 wins of 10 at (0, 20) is 10 ln(p1/p0) = 0.56; the
    # normal approximation said 3.54
    assert arena.sprt_llr([1.0] * 10, 0, 20) == pytest.approx(10 * math.log(arena.score_of_elo(20) / 0.5))
    r = arena.bradley_terry({("a", "b"): 64, ("b", "a"): 36, ("b", "c"): 64, ("c", "b"): 36}, ["a", "b", "c"])
    assert r["a"] == 0.0 and r["b"] < 0.0 and r["c"] < r["b"]


def test_arena_rotates_seats_and_sprt_stops() -> None:
    rep = arena.run_arena(["ismcts:iterations=60,evaluator=vp", "random"], games=12, players=3, game="toy")
    assert rep.games == 12
    assert sum(rep.wins.values()) == 12
    seats_of = {r.game: r.seats for r in rep.results}
    assert seats_of[0] != seats_of[1]
    rep2 = arena.run_arena(["ismcts:iterations=80,evaluator=vp", "random"], games=300, game="toy",
                           sprt=(0.0, 150.0, 0.05, 0.05))
    assert rep2.sprt is not None and rep2.sprt["result"] == "H0 accepted"
    assert rep2.games < 300


def test_arena_table_keeps_columns_aligned_for_long_specs() -> None:
    long = "ismcts:iterations=30,evaluator=vp,c=0.7,temperature=0.0,depth=8"
    rep = arena.run_arena([long, "random"], games=4, game="toy")
    header, *rows = rep.table().splitlines()[1:]
    end = header.index("wins") + len("wins")
    for spec, row in zip([long, "random"], rows, strict=True):
        assert row.startswith(spec + " ")
        assert row[:end].split()[-1] == str(rep.wins[spec]) and row[end] == " "  # under "wins"
    assert len({row.index("[") for row in rows}) == 1


def test_progress_reports_the_current_best_decision() -> None:
    import engine_ext

    g = engine_ext.new_game(players=2, seed=3)
    legal = {str(d) for d in g.legal()}
    seen: list[dict[str, object]] = []
    suggest.analyse_state(g.to_json(), time_ms=250, seed=2, progress=seen.append)
    assert seen, "a search of 250 ms reports progress"
    for report in seen:
        assert isinstance(report["iterations"], int) and report["iterations"] > 0
        assert report["decision_text"] in legal
        assert isinstance(report["visits"], int) and 0 < report["visits"] <= report["iterations"]


def test_the_baseline_splits_its_budget_into_worlds_by_its_size() -> None:
    """`det` with no `worlds` gives each world about 40 iterations, from 1 to 8 worlds, so a small
    budget is not spread over worlds too small to search; an explicit `worlds` is kept."""
    import engine_ext
    from lab.determinized import DeterminizedBot, worlds_for

    assert [worlds_for(n) for n in (0, 10, 80, 100, 300, 320, 2000)] == [8, 1, 2, 2, 7, 8, 8]
    game = engine_ext.new_game(2, seed=4)

    def worlds_run(bot: DeterminizedBot, iterations: int) -> tuple[int, int]:
        reports: list[dict[str, float]] = []
        an = bot.analyse(game, iterations=iterations, seed=1, progress=reports.append)
        assert sum(a.visits for a in an.alternatives) == iterations
        return int(reports[-1]["worlds"]), an.iterations

    assert worlds_run(DeterminizedBot(), 100) == (2, 100)
    assert worlds_run(DeterminizedBot(), 400) == (8, 400)
    assert worlds_run(DeterminizedBot(worlds=5), 100) == (5, 100)
    with pytest.raises(ValueError, match="worlds"):
        DeterminizedBot(worlds=-1)
