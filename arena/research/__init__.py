"""Game-AI research on the engine: a PettingZoo environment, an OpenSpiel game and a bridge to the arena.

An optional extra (``pip install -e '.[rl]'``): nothing in the core imports this package.

* `arena.research.spaces`: the fixed action space and the observation tensor, both built from a
  seat's own view;
* `arena.research.pettingzoo`: `env(variant=..., **options)` and `raw_env`, an AEC environment;
* `arena.research.openspiel`: importing it registers ``pyspiel.load_game("grosstarock_arena", ...)``;
* `arena.research.bridge`: ``python -m arena.research.bridge`` plays an OpenSpiel bot or a policy
  function as an arena bot over gRPC.

docs/RESEARCH.md describes them.
"""
