"""`skillchat eval`: does a model pick the right skill? (queries.py reads the query
files, runner.py replays them through the real catalog and loop, report.py sums the
runs up per skill and model.) A layer of its own beside `session`: it builds chats as
`ask` does, but saves none of them."""
