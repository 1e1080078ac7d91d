"""Why a search prefers a decision, in one sentence made from its own numbers.

A hint's best move and a review's better move carry a `reason`: what the decision gains over the
next best the search looked at (its win chance and its expected VP, each against that one's), and
what the line it expects does for the player to move, played out on a copy of the game while its
steps are legal there: the contracts it fulfils, the cards it takes or keeps, the VP it scores. On a
seat's view a draw from a deck is made up (the view does not know the order), so the line never
names a card it draws; it names only what the seat can see coming.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bots.answer import AlternativeStats, Answer
from engine_ext.decisions import Decision
from engine_ext.words import Words, words


def reason(answer: Answer, game: Any) -> str:
    """The sentence for `answer`'s decision on `game` (the position it searched)."""
    others = [a for a in answer.alternatives if a.code != answer.code and a.visits > 0]
    if not others:
        only = "the only decision the search looked at" if len(answer.alternatives) > 1 else "the only legal decision"
        return _sentence(answer, game, None, only)
    return _sentence(answer, game, others[0], None)


def better_reason(answer: Answer, game: Any, played: Decision) -> str:
    """The sentence for a review's better move: `answer`'s decision against the one `played`."""
    mine = answer.alternative(played)
    if mine is None or mine.code == answer.code:
        return reason(answer, game)
    return _sentence(answer, game, mine, "the move played")


def _sentence(answer: Answer, game: Any, other: AlternativeStats | None, other_words: str | None) -> str:
    """The decision in words, what it gains over `other` (named `other_words`, else in words; with
    no `other`, `other_words` says why there is none), and what its line does."""
    said = words(game.engine.data)
    context = game.decision_context()
    if other is None:
        gain = str(other_words)
    else:
        gain = _gain(answer.chosen, other, other_words or said.decision(other.decision, context))
    sentence = f"{_capital(said.decision(answer.decision, context))}: {gain}"
    effects = line_effects(game, answer.line, int(game.current_player), said)
    if effects:
        sentence += f"; the line it expects {_joined(effects)}"
    return sentence + "."


def _gain(best: AlternativeStats, other: AlternativeStats, other_words: str) -> str:
    """What `best` gains over `other`: win chance in percent and expected VP, each as the search
    found them (a figure it has not got is left out)."""
    parts = []
    if best.win_prob is not None and other.win_prob is not None:
        parts.append(f"{_pct(best.win_prob)} to win against {_pct(other.win_prob)}")
    if best.expected_vp is not None and other.expected_vp is not None:
        parts.append(f"{best.expected_vp:.1f} VP expected against {other.expected_vp:.1f}")
    if not parts:
        return f"visited {best.visits} times against {other.visits} for {other_words}"
    return f"{' and '.join(parts)} for {other_words}"


def line_effects(game: Any, line: Sequence[Decision], mover: int, said: Words) -> list[str]:
    """What the `line` does for `mover`, played on a copy of `game` while its steps are legal (a
    line may skip other seats' turns: it stops at the first step not legal there, and on a view at
    the first choice among drawn cards, which the view made up): each contract the mover fulfils,
    each card it takes from the discard pile (or keeps, on a full state), and the VP it scores."""
    now = game.clone()
    start = int(now.vp(mover))
    view = getattr(game, "observer", None) is not None
    out: list[str] = []
    for d in line:
        if now.is_terminal:
            break
        try:
            code = now.legal_code(d)
        except ValueError:
            break
        if view and d.kind == "keep":
            break  # a choice among drawn cards a view made up: what follows hangs on them
        if int(now.current_player) == mover:
            if d.kind == "fulfil" and d.args:
                out.append(f"fulfils {said.contract(d.args[0])}")
            elif d.kind in ("take", "keep"):
                out.append(f"{'takes' if d.kind == 'take' else 'keeps'} the {said.name(d.args[0])}")
        now.state.apply_unchecked(code)
    scored = int(now.vp(mover)) - start
    if scored > 0:
        out.append(f"scores {scored} VP")
    return out


def _pct(p: float) -> str:
    return f"{100.0 * p:.0f}%"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _joined(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]
