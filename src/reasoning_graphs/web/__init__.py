"""The page a person opens in a browser to ask, watch a run and decide its calls.

It ships in the wheel (:mod:`.page` serves it from the project's HTTP app, at ``/page/``)
and talks only to the server that served it: no script, font or style comes from
anywhere else, so it works offline.
"""
