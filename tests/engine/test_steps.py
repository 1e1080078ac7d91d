"""The step language's one table (`engine_ext.steps`): the core, the loader, the program checks and
the card file agree with it."""

from __future__ import annotations

import string
from importlib import resources

import pytest

from engine_ext import carddata, program, steps
from engine_ext import core as C
from engine_ext.carddata import CardDataError, compile_step


def test_the_core_constants_are_the_tables() -> None:
    assert steps.check_core(C) == [] and carddata.core_disagrees() == []
    assert sorted(s.opcode for s in steps.STEPS) == list(range(1, len(steps.STEPS) + 1))
    opcodes = {n for n in vars(C) if n.startswith("OP_")}
    assert opcodes == {"OP_" + s.name.upper() for s in steps.STEPS}  # no opcode outside the table


def test_a_core_constant_out_of_step_is_named() -> None:
    class Core:
        pass

    fake = Core()
    for name in dir(C):
        setattr(fake, name, getattr(C, name))
    fake.OP_DRAW = 99  # type: ignore[attr-defined]
    fake.F_SMALL = 3  # type: ignore[attr-defined]
    assert steps.check_core(fake) == ["core.OP_DRAW is 99, the step table says 5",
                                      "core.F_SMALL is 3, the step table says 4"]


def test_every_step_of_the_card_data_reads_back_as_its_compiled_program() -> None:
    data = carddata.default()
    ops = data.tables["ops"]
    seen = set()
    for kind in data.kinds:
        for slot, action in enumerate(kind.actions):
            if action is None:
                continue
            act = data.tables["kact"][kind.index * 3 + slot]
            start = data.tables["a_start"][act]
            for i, text in enumerate(action):
                parsed = steps.parse(text)
                seen.add(parsed.step.name)
                assert parsed.code() == tuple(ops[(start + i) * 4:(start + i + 1) * 4]), text
    assert seen == {s.name for s in steps.STEPS}  # the card data uses the whole language


@pytest.mark.parametrize(("text", "code"), [
    ("pay gold 1", (C.OP_PAY, C.GOLD, 1, 0)),
    ("inc $ N:contracts", (C.OP_INC, C.REG, C.AMT_CONTRACTS, 0)),
    ("choose spice min 4", (C.OP_CHOOSE, C.SPICE_MASK, 4, 0)),
    ("choose spice not $", (C.OP_CHOOSE, C.SPICE_MASK, 0, 1)),
    ("choose cinnamon|pepper not $ min 2", (C.OP_CHOOSE, 1 << 4 | 1 << 2, 2, 1)),
    ("draw special 2 front", (C.OP_DRAW, C.DECK_SPECIAL, 2, 1)),
    ("fulfil free small", (C.OP_FULFIL, C.F_FREE | C.F_SMALL, 0, 0)),
    ("fulfil spices_for_cinnamon", (C.OP_FULFIL, C.F_SPICES_FOR_CINNAMON, 0, 0)),
    ("contracts_free 5", (C.OP_CONTRACTS_FREE, 5, 0, 0)),
    ("contracts_free 5 2", (C.OP_CONTRACTS_FREE, 5, 2, 0)),
    ("opp_dec_if_ge gold 3 2", (C.OP_OPP_DEC_IF_GE, C.GOLD, 3, 2)),
    ("shuffle special", (C.OP_SHUFFLE, C.DECK_SPECIAL, 0, 0)),
    ("set_distinct spice 2 5", (C.OP_SET_DISTINCT, C.SPICE_MASK, 2, 5)),
    ("route_fronts", (C.OP_ROUTE_FRONTS, 0, 0, 0)),
])
def test_steps_compile_to_the_cores_integers(text: str, code: tuple[int, int, int, int]) -> None:
    assert compile_step(text, "here") == code


@pytest.mark.parametrize(("text", "says"), [
    ("", "empty step"),
    ("hirte", "unknown step 'hirte'"),
    ("fulfil hoeker", "'fulfil' takes"),
    ("inc saffron 2", "unknown resource 'saffron'"),
    ("pay gold N:contracts", "n must be a number 0..9"),
    ("inc gold 10", "n must be a count or a number 0..9"),
    ("contracts_free 5 0", "n must be a number 1..9"),
    ("draw discard 2", "DECK is standard or special"),
    ("shuffle standard", "DECK is special"),
    ("choose", "'choose' takes 'choose MASK [min k] [not $]'"),
    ("choose spice min", "'min' needs a value"),
    ("turn_self now", "'turn_self' takes"),
    ("set gold 1 2", "'set' takes 'set R n'"),
])
def test_a_wrong_step_is_named_with_its_card(text: str, says: str) -> None:
    with pytest.raises(CardDataError) as e:
        compile_step(text, "card 'x' action a")
    assert str(e.value).startswith("card 'x' action a: ") and says in str(e.value)


def test_where_a_program_stops_comes_from_the_table() -> None:
    def waits(text: str) -> tuple[int, ...]:
        return program.Stop((compile_step(text, ""),), 0).waits()

    assert waits("inc gold 1") == ()
    assert waits("fulfil") == (C.P_FULFIL,)
    assert waits("fulfil spices_for_cinnamon") == (C.P_FULFIL, C.P_CINNAMON)
    assert waits("contracts_free 3") == ()  # every free one is taken: nothing to ask
    assert waits("contracts_free 3 1") == (C.P_CFREE,)
    assert waits("trade") == (C.P_TRADE_PAY, C.P_TRADE)
    assert waits("route_fronts") == (C.P_ROUTE,)
    stop = program.Stop(tuple(compile_step(t, "") for t in ("choose spice", "choose spice not $", "inc $ 1")), 0)
    assert stop.reads_reg_later()
    assert not program.Stop((compile_step("choose spice", ""), compile_step("inc gold 1", "")), 0).reads_reg_later()


def test_every_step_is_documented_and_says_only_its_own_arguments() -> None:
    text = steps.reference()
    for s in steps.STEPS:
        assert s.does and s.says and s.syntax() in text
        fields = {a.field for a in s.args}
        used = {name for _lit, name, _spec, _conv in string.Formatter().parse(s.says)
                if name is not None}
        assert used <= fields, s.name


def test_the_card_file_points_to_the_table_and_names_no_step_after_a_card() -> None:
    text = resources.files("engine_ext").joinpath("data/cards.toml").read_text(encoding="utf-8")
    header = text[:text.index("[[card]]")]
    assert "engine_ext/steps.py" in header
    assert not any(line.startswith(f"#   {s.name}") for s in steps.STEPS for line in header.splitlines())
    slugs = {k.slug for k in carddata.default().kinds}
    words = {s.name for s in steps.STEPS} | {f.word for f in steps.FULFIL_FLAGS}
    assert not words & slugs
