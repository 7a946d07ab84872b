"""The player with a trained network: ``cfr+nn`` in the player registry.

It searches as self-play trained the network (``ggp train``'s ``search = auto``): where
every role sees every move (the game's moves are public: perfect information) with PUCT
Monte Carlo tree search, the network its prior and, mixed with a random playout, its leaf
evaluator (:class:`~ggp.players.classic_player.ClassicPlayer`, ``mcts:eval=nn``,
:meth:`NetCFRPlayer.puct_player`); else, or with ``search=cfr``, as a
:class:`~ggp.players.cfr_player.CFRPlayer` (iterative-deepening CFR-D from histories
sampled consistently with the player's observations) whose

- leaves at the depth limit are valued by the network (:class:`NetEvaluator`),
- CFR starts from the network's policy (:func:`~ggp.nn.guided.warm_start`),
- sampler models the other roles by the network's policy mixed with the uniform one
  (:class:`~ggp.nn.net_evaluator.OpponentModel`), in the exact posterior sampler.

The network is loaded from a checkpoint when the player learns its game (at ``start``,
or earlier through :meth:`NetCFRPlayer.load`). Where no network fits the game — the
checkpoint was trained on other rules (the corpus ``meier.kif`` with the checkpoint of
``games/meier.gdl``, say), no checkpoint was given and none is found for the game, or the
game runs on the prover — the player warns once and plays as the search-only ``cfr``
player (:attr:`NetCFRPlayer.search_only` says why). A checkpoint file given explicitly
that is missing or not a checkpoint is an error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.nn.checkpoint import CheckpointMismatchError, default_checkpoint, load_network
from ggp.nn.guided import infoset_priors, warm_start
from ggp.nn.net_evaluator import NetEvaluator, OpponentModel
from ggp.players.base import MatchInfo, MovePolicy, Observation
from ggp.players.cfr_player import CFRPlayer, CFRSettings
from ggp.players.classic_player import ClassicPlayer, ClassicSettings
from ggp.players.policy import estimate_policy
from ggp.search.cfr import CFRSolver, FloatArray
from ggp.search.posterior import PosteriorSampler
from ggp.search.tree import GameTree

__all__ = ["NetCFRPlayer", "NetSettings", "PLAY_SETTINGS", "SEARCHES", "Search"]

logger = logging.getLogger(__name__)

#: Search settings for play under a 1 s clock: stop early enough that sampling, tree
#: building and the network's batch finish in time on a busy machine. The others play the
#: opponent model with probability 0.5 in the search (a restricted Nash response,
#: ``model_weight``); measured against 0 (``training/RESULTS.md``, 300-600 games per
#: cell): Blind Tic-Tac-Toe x 79.8 -> 83.0 vs random and 61.7 -> 77.2 vs handcrafted, o
#: 78.0 -> 81.7 and 65.2 -> 64.6; Meier p2 92.8 -> 93.0 and 53.2 -> 57.0; Meier p1 the
#: same games.
PLAY_SETTINGS = CFRSettings(min_time_s=0.3, max_time_s=0.7, margin_s=0.15, model_weight=0.5)


Search = Literal["auto", "cfr", "mcts"]

#: The searches a :class:`NetSettings` can name.
SEARCHES: tuple[Search, ...] = ("auto", "cfr", "mcts")


@dataclass(frozen=True)
class NetSettings:
    """How the network guides the search.

    Attributes:
        prior_weight: Warm-start weight of the network's policy in CFR (0: none).
        uniform_mix: Weight of the uniform policy in the model of the other roles
            (1: uniform, the network is not used by the sampler). The default, 0.8, was
            chosen on Meier as player 2 (400 games per cell, ``training/RESULTS.md``):
            0.5 scores 81.5 against random and 61.0 against the handcrafted player,
            0.8 scores 94.5 and 53.2 (the ceilings are 95.3 and 63.0): a model close to
            the network's own (self-play) policy believes a weak opponent's claims.
        search: ``cfr`` (CFR-D), ``mcts`` (PUCT; the game's moves must be public) or
            ``auto``: ``mcts`` where the game's moves are public, else ``cfr`` (what
            ``ggp train`` does).
        rollout_weight: With PUCT, the weight of one random playout in a leaf's value,
            the rest the network's (AlphaGo's lambda,
            :class:`~ggp.search.evaluator.MixedEvaluator`).
    """

    prior_weight: float = 1.0
    uniform_mix: float = 0.8
    search: Search = "auto"
    rollout_weight: float = 0.5


class NetCFRPlayer(CFRPlayer):
    """CFR-D guided by a trained network (see the module docstring).

    Args:
        checkpoint: The checkpoint file (None: ``checkpoints/<game>/latest.pt``, see
            :func:`~ggp.nn.checkpoint.default_checkpoint`).
        settings: Search settings (time per move etc.).
        rng: The source of randomness.
        net_settings: How the network guides the search.
        evaluator: Use this evaluator instead of loading a checkpoint.
    """

    name = "cfr+nn"

    def __init__(
        self,
        checkpoint: Path | None = None,
        settings: CFRSettings | None = None,
        rng: np.random.Generator | None = None,
        net_settings: NetSettings | None = None,
        evaluator: NetEvaluator | None = None,
    ) -> None:
        super().__init__(settings if settings is not None else PLAY_SETTINGS, None, rng)
        self.checkpoint = checkpoint
        self.net_settings = net_settings if net_settings is not None else NetSettings()
        self._net: NetEvaluator | None = evaluator
        self._priors: tuple[GameTree, FloatArray] | None = None
        self._loaded_for: Game | None = evaluator.game if evaluator is not None else None
        self._given = evaluator is not None
        self._rollouts = self.evaluator
        self._puct: ClassicPlayer | None = None  # the PUCT player of this match, if any
        #: With PUCT, the depth each searched move of the last match reached (the deepest
        #: tree node, :attr:`ClassicPlayer.depths
        #: <ggp.players.classic_player.ClassicPlayer.depths>`); empty with CFR-D.
        self.depths: list[int] = []
        #: Why the player searches without a network (None: it has one, or has not
        #: learnt its game yet).
        self.search_only: str | None = None
        if evaluator is not None:
            self.evaluator = evaluator

    def load(self, game: Game) -> NetEvaluator | None:
        """Load the network for ``game`` (once per game).

        Returns:
            The network's evaluator, or None when no network fits the game: then the
            player searches without one, and :attr:`search_only` says why (logged once
            per game as a warning).

        Raises:
            GameError: The checkpoint given is missing or not a ggp checkpoint, or this
                player's evaluator was given for another game.
        """
        if self._loaded_for is game:
            return self._net
        if self._given and self._loaded_for is not None:
            # An evaluator given for one game cannot play another.
            raise GameError(
                f"this player's network is for {self._loaded_for.description.path}, "
                f"not {game.description.path}"
            )
        self._loaded_for = game
        self._net = None
        self.evaluator = self._rollouts
        self.search_only = None
        path = self.checkpoint if self.checkpoint is not None else default_checkpoint(game)
        if game.reasoner != "propnet":
            self._search_only(f"{game.description.path} runs on the {game.reasoner}")
            return None
        if self.checkpoint is None and not path.is_file():
            self._search_only(f"no network trained for {game.description.path} ({path})")
            return None
        try:
            net, encoding, checkpoint = load_network(path, game)
        except CheckpointMismatchError as e:
            self._search_only(str(e))
            return None
        logger.info(
            "loaded %s (%d steps, %d games)",
            path,
            checkpoint.metadata.steps,
            checkpoint.metadata.games,
        )
        self._net = NetEvaluator(net, encoding)
        self.evaluator = self._net
        return self._net

    def play(self, observation: Observation, deadline: float) -> Term:
        if self._puct is not None:
            return self._puct.play(observation, deadline)
        return super().play(observation, deadline)

    def stop(self, observation: Observation) -> None:
        if self._puct is not None:
            self._puct.stop(observation)
            self.depths = list(self._puct.depths)
            self._puct = None
        super().stop(observation)

    def abort(self) -> None:
        if self._puct is not None:
            self._puct.abort()
            self.depths = list(self._puct.depths)
            self._puct = None
        super().abort()

    def policy(
        self, match: MatchInfo, observations: Sequence[Observation], deadline: float
    ) -> MovePolicy:
        """As :meth:`CFRPlayer.policy`; with PUCT, which plays its most visited move,
        the move a fresh PUCT player plays after ``observations`` (each turn searched to
        the match's clock, :func:`~ggp.players.policy.estimate_policy` with one play)."""
        puct = self.puct_player(match.game)
        if puct is None:
            return super().policy(match, observations, deadline)
        return estimate_policy(puct, match, observations, 1)

    def _search_only(self, reason: str) -> None:
        self.search_only = reason
        logger.warning("cfr+nn: %s; playing the search-only cfr player instead", reason)

    def puct_player(self, game: Game) -> ClassicPlayer | None:
        """A fresh PUCT player of ``game`` as this player plays it (None: CFR-D, when the
        settings say so or no network fits the game).

        Raises:
            GameError: ``search=mcts`` and the game's moves are not public.
        """
        net = self.load(game)
        search = self.net_settings.search
        if net is None or search == "cfr" or (search == "auto" and not game.moves_public):
            return None
        if not game.moves_public:
            raise GameError(
                "cfr+nn search=mcts needs a game whose moves are public (no sees rules); "
                f"{game.description.path} hides some: use search=cfr"
            )
        # The same time per move as CFR-D: at most max_time_s, margin_s before the deadline.
        settings = ClassicSettings(
            "mcts",
            evaluation="nn",
            max_time_s=self.settings.max_time_s,
            margin_s=self.settings.margin_s,
            rollout_weight=self.net_settings.rollout_weight,
        )
        return ClassicPlayer(settings, self.rng, evaluator=net)

    def start(self, match: MatchInfo) -> None:
        self.depths = []
        self._puct = self.puct_player(match.game)
        if self._puct is not None:
            self._puct.start(match)
            return
        net = self._net
        super().start(match)
        if net is not None:
            self._sampler = PosteriorSampler(
                match.game, OpponentModel(net, self.net_settings.uniform_mix)
            )

    def _make_solver(self, tree: GameTree, whole_game: bool = False) -> CFRSolver:
        # The solver starts from the network's policy, and models the others by it. The
        # whole game's solve is not warm-started: a prior that is not an equilibrium slows
        # CFR+ where nothing is left to guess (Leduc at 1 s a decision, model=0: 0.080
        # chip from the best response with the warm start, training/RESULTS.md).
        self._priors = None
        if self._net is None:  # search only, as the cfr player: an equilibrium
            return CFRSolver(tree, self.settings.algorithm)
        solver = super()._make_solver(tree, whole_game)
        if self.net_settings.prior_weight > 0 and not whole_game:
            warm_start(solver, self._tree_priors(tree), self.net_settings.prior_weight)
        return solver

    def _tree_priors(self, tree: GameTree) -> FloatArray:
        """``[A]`` the network's policy at every information set of ``tree`` (cached)."""
        if self._priors is None or self._priors[0] is not tree:
            assert self._net is not None
            self._priors = (tree, infoset_priors(tree, self._net))
        return self._priors[1]

    def _opponent_model(self, tree: GameTree) -> FloatArray:
        # The sampler's model of the others: the network mixed with uniform play.
        uniform = super()._opponent_model(tree)
        if self._net is None:
            return uniform
        mix = self.net_settings.uniform_mix
        model: FloatArray = (1.0 - mix) * self._tree_priors(tree) + mix * uniform
        return model
