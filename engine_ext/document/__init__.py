"""States as JSON documents (`kashgar/state@1`): full states, players' views, and new games.

The core keeps a state as one integer array; this package is the only place that knows how that
array maps to the document: `schema` (the format, its validation, StateError), `deal` (new games),
`load` with `builder` and `load_pending` (a document read into the array, every field checked),
`dump` (the array written as a document). Where a rule of the game is needed on the array, `array`
lends the core's own (`state_over`: the interpreted core's State over that array).
"""
