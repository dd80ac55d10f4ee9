"""The ``reasoning-graphs`` command line (entry point: :func:`reasoning_graphs.cli.main.main`)."""
