"""The named steps of a turn around the loop (engine/turn.py says when a step is
called and what of its chat it sees; engine/loop.py's `chat_steps` makes them for
each chat): `/name` activation, attached files, the `paths` gate, fitting the
request into the context, automatic compaction, a reply cut at its output limit,
and the session's own, a skill's model taking the chat's turns."""
