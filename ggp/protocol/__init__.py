"""The GGP protocol: messages (:mod:`~ggp.protocol.messages`), an HTTP player (`ggp serve`:
:mod:`~ggp.protocol.http_handler` in front of :mod:`~ggp.protocol.service`, one
:mod:`~ggp.protocol.session` per match, with :mod:`~ggp.protocol.game_cache` and
:mod:`~ggp.protocol.match_log`) and a game manager (`ggp match`,
:mod:`~ggp.protocol.game_manager`). See ``../shared/protocol/README.md`` for the rules."""
