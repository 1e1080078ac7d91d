"""The determinized baseline (`lab.determinized`): its budget split over worlds."""

from __future__ import annotations

import subprocess
import sys


def test_determinized_budgets_smaller_than_the_worlds_stop() -> None:
    """A world with a share of 0 and no time budget searched forever (`det:iterations=3,worlds=4`,
    `det:iterations=0`); iterations=0 means one iteration, as for ISMCTSBot. (A subprocess: the
    old code hung.)"""
    code = ("import engine_ext\nfrom lab.bots import make_bot\ng = engine_ext.new_game(2, seed=5)\n"
            "for spec in ('det:iterations=3,worlds=4', 'det:iterations=0', 'ismcts:iterations=0'):\n"
            "    print(make_bot(spec).analyse(g, seed=1).iterations)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         check=True)
    assert out.stdout.split() == ["3", "1", "1"]
