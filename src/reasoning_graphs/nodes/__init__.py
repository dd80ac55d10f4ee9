"""The steps two or more patterns share, in five rooms, each importing only the rooms below it.

From the bottom up:

- :mod:`.grounding`: which claims of an answer rest on what the tools returned.
- :mod:`.guards`: the question's budgets, the loop guards and the honest ending.
- :mod:`.model`: the one path every model call takes (binding, watch, retry, tokens,
  context window) and the run scope it is made in.
- :mod:`.steps`: the nodes themselves: think, approve, act, observe, finish, plan, judge.
- :mod:`.wiring`: the steps joined into loops and compiled graphs, with durability and resume.
"""
