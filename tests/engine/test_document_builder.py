"""The document builder's shuffle of the cards a document leaves out: the same order as one
`random.Random(seed)` shuffling each list in turn, whether the order was known or drawn."""

from __future__ import annotations

import random

import engine_ext
from engine_ext.document import builder
from engine_ext.document.builder import Builder


def test_shuffles_give_the_orders_of_one_random_stream() -> None:
    data = engine_ext.get_engine(False).data
    builder._ORDERS.clear()
    # each sequence twice (the second time from the known orders), and sequences that share a start
    # then part (known, then drawn: the stream is replayed up to there)
    for seed in (1, 7, 2**40 + 3):
        for lengths in ((60, 8, 30), (60, 8, 30), (60, 9, 30), (0, 5, 1), (60, 8, 31), (60, 8, 31)):
            b, stream = Builder(data, {}, seed), random.Random(seed)
            for n in lengths:
                ours, theirs = [100 + i for i in range(n)], [100 + i for i in range(n)]
                b.shuffle(ours)
                stream.shuffle(theirs)
                assert ours == theirs, (seed, lengths, n)


def test_the_known_orders_stay_bounded() -> None:
    data = engine_ext.get_engine(False).data
    builder._ORDERS.clear()
    for seed in range(builder._ORDERS_MAX + 10):
        Builder(data, {}, seed).shuffle(list(range(3)))
    assert len(builder._ORDERS) <= builder._ORDERS_MAX
