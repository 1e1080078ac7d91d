"""A tiny hidden-deck game with the core State protocol of `engine_ext` (see docs/engine-api.md).

It exists so that the search, the arena and their tests can run on a game whose every line is
known: small, fast, with a hidden deck, mid-turn decisions whose legal set depends on the hidden
order, and a clear best strategy (so a searching bot must beat a random one).

Rules. 2-4 players, a shared deck of cards valued 0..4 (hidden order). On their turn the player
either *banks* (+1 VP) or *draws*: the top two cards are revealed to that player only, who then
*keeps* one of them (gains its value in VP); the other goes to the bottom of the deck. A draw is
worth about 2.4 VP on average, a bank 1 VP, and keeping the higher card is always right. The game
ends when a round is complete in which someone reached `target` VP; most VP wins, ties go to the
player who reached their total last (as in Kashgar). Decision codes follow the engine's
`kind << 8 | arg` form: bank = 1 << 8, draw = 2 << 8, keep v = 3 << 8 | v.
"""

from __future__ import annotations

import random

BANK = 1 << 8
DRAW = 2 << 8
KEEP = 3 << 8
CARD_VALUES = (0, 1, 2, 3, 4)
COPIES = 4


class ToyState:
    """A full (trusted) state of the toy game; the same methods as `engine_ext` core states."""

    __slots__ = ("players", "vps", "last_scored", "deck", "pending", "turn_p", "start", "turn",
                 "target", "over", "legal_buf")

    def __init__(self, players: int = 2, seed: int = 0, target: int = 12) -> None:
        self.players = players
        self.vps = [0] * players
        self.last_scored = [-1] * players
        deck = [v for v in CARD_VALUES for _ in range(COPIES)]
        random.Random(seed).shuffle(deck)
        self.deck = deck
        self.pending: list[int] = []  # the two cards the turn player drew, while choosing
        self.turn_p = 0
        self.start = 0
        self.turn = 0
        self.target = target
        self.over = False
        self.legal_buf = [0] * 8

    def clone(self) -> ToyState:
        c = ToyState.__new__(ToyState)
        c.players = self.players
        c.vps = list(self.vps)
        c.last_scored = list(self.last_scored)
        c.deck = list(self.deck)
        c.pending = list(self.pending)
        c.turn_p = self.turn_p
        c.start = self.start
        c.turn = self.turn
        c.target = self.target
        c.over = self.over
        c.legal_buf = [0] * 8
        return c

    def current_player(self) -> int:
        return -1 if self.over else self.turn_p

    def turn_player(self) -> int:
        return self.turn_p

    def is_terminal(self) -> bool:
        return self.over

    def gen_legal(self) -> int:
        codes = self.legal_codes()
        for i, c in enumerate(codes):
            self.legal_buf[i] = c
        return len(codes)

    def legal_codes(self) -> list[int]:
        if self.over:
            return []
        if self.pending:
            return [KEEP | v for v in sorted(set(self.pending))]
        return [BANK, DRAW]

    def apply(self, code: int) -> None:
        if code not in self.legal_codes():
            raise ValueError(f"illegal decision {code}")
        self.apply_unchecked(code)

    def apply_unchecked(self, code: int) -> None:
        p = self.turn_p
        if code == DRAW:
            self.pending = [self.deck.pop(0), self.deck.pop(0)]
            return
        if code == BANK:
            gain = 1
        else:
            v = code & 0xFF
            other = self.pending[1] if self.pending[0] == v else self.pending[0]
            self.deck.append(v)  # the kept card is recycled too, so the deck never runs out
            self.deck.append(other)
            self.pending = []
            gain = v
        if gain:
            self.vps[p] += gain
            self.last_scored[p] = self.turn
        self.turn += 1
        self.turn_p = (p + 1) % self.players
        if self.turn_p == self.start and max(self.vps) >= self.target:
            self.over = True

    def vp(self, p: int) -> int:
        return self.vps[p]

    def winner(self) -> int:
        if not self.over:
            return -1
        return max(range(self.players), key=lambda q: (self.vps[q], self.last_scored[q]))

    def playout(self, seed: int) -> int:
        rng = random.Random(seed)
        n = 0
        while not self.over:
            codes = self.legal_codes()
            self.apply_unchecked(codes[rng.randrange(len(codes))])
            n += 1
        return n

    def determinize(self, observer: int, seed: int) -> ToyState:
        """A copy whose hidden cards are re-sampled from what `observer` knows (never peeks)."""
        c = self.clone()
        rng = random.Random(seed)
        hidden = list(c.deck)
        if c.pending and observer != c.turn_p:
            hidden += c.pending
        hidden.sort()  # canonical order first: the answer must not depend on the true order
        rng.shuffle(hidden)
        if c.pending and observer != c.turn_p:
            c.pending = [hidden.pop(), hidden.pop()]
        c.deck = hidden
        return c

    # -- what the facade would give: text of a code, a view --
    @staticmethod
    def code_text(code: int) -> str:
        if code == BANK:
            return "bank"
        if code == DRAW:
            return "draw"
        return f"keep {code & 0xFF}"

    def view_key(self, observer: int) -> str:
        """Everything `observer` knows, as a string (the information state)."""
        mine = sorted(self.pending) if self.pending and observer == self.turn_p else []
        return (f"p{observer} cur{self.current_player()} vps{self.vps} ls{self.last_scored} "
                f"t{self.turn} pend{len(self.pending)}{mine}")
