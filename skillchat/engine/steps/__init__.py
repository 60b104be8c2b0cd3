"""The named steps of a turn around the loop (engine/turn.py says how a step is
called, engine/loop.py registers them): `/name` activation, attached files,
fitting the request into the context, automatic compaction."""
