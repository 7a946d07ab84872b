"""The GGP protocol: messages (:mod:`~ggp.protocol.messages`), an HTTP player (`ggp serve`,
:mod:`~ggp.protocol.http_player`) and a game manager (`ggp match`,
:mod:`~ggp.protocol.game_manager`). See ``../shared/protocol/README.md`` for the rules."""
