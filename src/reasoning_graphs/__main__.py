"""``python -m reasoning_graphs`` runs the command line."""

from reasoning_graphs.cli.main import entry

entry()
