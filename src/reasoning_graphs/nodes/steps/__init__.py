"""The shared steps: think, approve, act, observe, finish, plan and judge, with the records a
person's decision and a tool's run leave behind."""
