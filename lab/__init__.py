"""The lab: tournaments (arena, SPRT, Elo), tuning (levels, SPSA), evaluation fitting, blunder
counting, calibration runs and fits, the determinized baseline, the OpenSpiel adapter, the toy game,
the fuzzer and the harness that serves the app for benchmarks and load tests.

It sits beside the product and uses it; the product (`engine_ext`, `bots`, `service`) never
imports it. Its numeric tools need the `lab` extra (`pip install -e ".[lab]"`).
"""
