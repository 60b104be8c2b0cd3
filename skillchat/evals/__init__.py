"""Measuring skills. `skillchat eval`: does a model pick the right skill? (queries.py
reads the query files, runner.py replays them through the real catalog and loop,
report.py sums the runs up per skill and model.) `skills cost`: what each skill
spends in tokens (cost.py, from the same catalog and tools requests use). `skills
stats`: how the saved chats used them (usage.py, the chat store read-only). A layer
of its own above `session`: it builds chats as `ask` does, but saves none of them."""
