"""The learned value/policy network and how it plugs into search.

:mod:`~ggp.nn.features` (a game's encoding: base propositions in, every role's value and a
policy per role out), :mod:`~ggp.nn.model` (the network), :mod:`~ggp.nn.net_evaluator` (the
search's Evaluator and the samplers' PolicyModel seams), :mod:`~ggp.nn.guided` (CFR-D
warm-started from the network's policy) and :mod:`~ggp.nn.checkpoint`. Search and the
players below it never import this package; the ``cfr+nn`` player that uses it lives
with the other players (:mod:`~ggp.players.net_player`).
"""
