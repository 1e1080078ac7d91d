"""Kashgar as an OpenSpiel Python game (optional extra `open_spiel`), so that OpenSpiel's own
Python `ISMCTSBot` can play it, and a `Bot` wrapper around that ISMCTSBot for the arena.

Actions are the engine's decision codes (`kind << 8 | arg`). Chance is *sampled* (the deck order
is part of the state, as in the engine); `resample_from_infostate` re-samples it with the engine's
`determinize`, from what the player knows. The information-state string of a player is their view
document (`Game.to_json(observer=p)`), which lists exactly what they know. The same works for the
toy game (`game="toy"`), whose states have `view_key`.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import numpy as np
import pyspiel

from bots.base import Alternative, Analysis, Bot, ProgressFn, StopFn, Timer, decision_point

NUM_ACTIONS = 10 << 8


def _game_type(short: str, long: str) -> Any:
    return pyspiel.GameType(
        short_name=short, long_name=long,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.CONSTANT_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=4, min_num_players=2,
        provides_information_state_string=True, provides_information_state_tensor=False,
        provides_observation_string=True, provides_observation_tensor=False,
        parameter_specification={"players": 2, "seed": 0, "toy": False})


_TYPE = _game_type("python_kashgar", "Kashgar: Merchants of the Silk Road (Python)")


class KashgarSpielGame(pyspiel.Game):  # type: ignore[misc]
    """The pyspiel game; parameters: players (2-4), seed (the deal), toy (the toy game instead)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.n = int(params.get("players", 2))
        self.seed = int(params.get("seed", 0))
        self.toy = bool(params.get("toy", False))
        info = pyspiel.GameInfo(num_distinct_actions=NUM_ACTIONS, max_chance_outcomes=0, num_players=self.n,
                                min_utility=0.0, max_utility=1.0, utility_sum=1.0, max_game_length=20000)
        super().__init__(_TYPE, info, {"players": self.n, "seed": self.seed, "toy": self.toy})
        self.root_state: Any = None

    def new_initial_state(self) -> KashgarSpielState:
        if self.root_state is not None:
            return KashgarSpielState(self, self.root_state.clone())
        if self.toy:
            from lab.toygame import ToyState

            return KashgarSpielState(self, ToyState(self.n, self.seed))
        import engine_ext

        return KashgarSpielState(self, engine_ext.new_game(players=self.n, seed=self.seed).state)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> InfoObserver:
        return InfoObserver()


def info_string(st: Any, player: int) -> str:
    """What `player` knows in core state `st`, as a string."""
    key = getattr(st, "view_key", None)
    if key is not None:
        return str(key(player))
    import engine_ext
    from engine_ext.game import Game

    doc = Game(engine_ext.get_engine(), st).to_json(observer=player)
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


class InfoObserver:
    """Information-state strings only (no tensors)."""

    def __init__(self) -> None:
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, Any] = {}

    def set_from(self, state: KashgarSpielState, player: int) -> None:
        pass

    def string_from(self, state: KashgarSpielState, player: int) -> str:
        return f"p{state.st.current_player()}|" + info_string(state.st, player)


class KashgarSpielState(pyspiel.State):  # type: ignore[misc]
    """A pyspiel state around a core state."""

    def __init__(self, game: KashgarSpielGame, st: Any) -> None:
        super().__init__(game)
        self.st = st

    def current_player(self) -> int:
        if self.st.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        return int(self.st.current_player())

    def _legal_actions(self, player: int) -> list[int]:
        return [int(c) for c in self.st.legal_codes()]

    def _apply_action(self, action: int) -> None:
        self.st.apply_unchecked(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        from bots.base import describe

        return describe(self.st, int(action))[1]

    def is_terminal(self) -> bool:
        return bool(self.st.is_terminal())

    def returns(self) -> list[float]:
        n = self.st.players
        if not self.st.is_terminal():
            return [0.0] * n
        w = self.st.winner()
        return [1.0 if p == w else 0.0 for p in range(n)]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> KashgarSpielState:
        seed = int(probability_sampler() * 2**31) & 0x7FFFFFFF
        return KashgarSpielState(self.get_game(), self.st.determinize(player_id, seed))

    def clone(self) -> KashgarSpielState:
        return KashgarSpielState(self.get_game(), self.st.clone())

    def __str__(self) -> str:
        return f"kashgar state, player {self.st.current_player()} to move"


class RandomRolloutEvaluatorLite:
    """OpenSpiel's RandomRolloutEvaluator with one rollout, seeded (their default evaluator)."""

    def __init__(self, rng: np.random.RandomState) -> None:
        from open_spiel.python.algorithms import mcts

        self.inner = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)

    def evaluate(self, state: Any) -> Any:
        return self.inner.evaluate(state)

    def prior(self, state: Any) -> Any:
        return self.inner.prior(state)


MIN_SIMULATIONS = 2  # OpenSpiel's first simulation only expands the root: its final policy needs a second


def _search_for(bot: Any, root: Any, time_ms: float, cap: int = 0) -> int:
    """Grow one tree of OpenSpiel's ISMCTSBot until `time_ms` is spent or `cap` simulations are
    run (0: no cap), at least MIN_SIMULATIONS.

    Their bot has no clock, and every `run_search` starts a new tree, so chunks of `run_search`
    would keep only the last chunk's simulations. This is `run_search`'s loop, on one tree, timed.
    Returns the number of simulations.
    """
    end = time.perf_counter() + time_ms / 1000.0
    bot.reset()
    bot._root_node = bot.create_new_node(root)
    done = 0
    while done < MIN_SIMULATIONS or (time.perf_counter() < end and (cap <= 0 or done < cap)):
        bot.run_simulation(bot.sample_root_state(root))
        done += 1
    return done


class OpenSpielISMCTS(Bot):
    """OpenSpiel's Python ISMCTSBot (UCT, max visit count, random-rollout evaluator) as a Bot."""

    def __init__(self, iterations: int = 300, time_ms: float = 0.0, c: float = 0.7,
                 name: str = "openspiel") -> None:
        if not time_ms and iterations < MIN_SIMULATIONS:
            raise ValueError(f"iterations must be at least {MIN_SIMULATIONS} for OpenSpiel's ISMCTS, "
                             f"not {iterations!r}")
        self.iterations = int(iterations)  # budgets when the caller gives none, as ISMCTSConfig's
        self.time_ms = float(time_ms)
        self.c = float(c)
        self.name = name

    def analyse(self, game: Any, *, iterations: int | None = None, time_ms: float | None = None,
                seed: int = 0, progress: ProgressFn | None = None,
                should_stop: StopFn | None = None) -> Analysis:
        from open_spiel.python.algorithms import ismcts

        t = Timer()
        st, me, codes = decision_point(game)
        if len(codes) == 1:
            return Analysis(codes[0], [Alternative(codes[0], 0, float("nan"), float("nan"), float("nan"))],
                            [codes[0]], 0, t.ms(), seed, self.name, me)
        sg = KashgarSpielGame({"players": st.players, "toy": hasattr(st, "view_key")})
        root = KashgarSpielState(sg, st.clone())
        rng = np.random.RandomState(seed & 0x7FFFFFFF)
        if iterations is None and time_ms is None:
            iterations, time_ms = self.iterations, self.time_ms
        n = int(iterations or 0) if time_ms else max(MIN_SIMULATIONS, int(iterations or self.iterations))
        bot = ismcts.ISMCTSBot(sg, RandomRolloutEvaluatorLite(rng), self.c, n, random_state=rng,
                               final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                               allow_inconsistent_action_sets=False)
        if time_ms:
            n = _search_for(bot, root, float(time_ms), n)
            policy = bot.get_final_policy(root, bot._root_node)
        else:
            policy = bot.run_search(root)
        probs = {int(a): float(p) for a, p in policy}
        node = bot._root_node
        visits = {int(a): int(ci.visits) for a, ci in node.child_info.items()}
        best = max(probs.values())
        choices = [a for a, p in probs.items() if p >= best - 1e-12]
        code = random.Random(seed).choice(sorted(choices))
        alts = []
        for c in codes:
            ci = node.child_info.get(c)
            mean = float(ci.return_sum / ci.visits) if ci is not None and ci.visits else float("nan")
            alts.append(Alternative(c, visits.get(c, 0), mean, float("nan"), float("nan")))
        return Analysis(code, alts, [code], n, t.ms(), seed, self.name, me)


def register() -> None:
    """Register `python_kashgar` with pyspiel (pyspiel.load_game("python_kashgar"))."""
    try:
        pyspiel.register_game(_TYPE, KashgarSpielGame)
    except Exception:  # noqa: BLE001 - already registered
        pass
