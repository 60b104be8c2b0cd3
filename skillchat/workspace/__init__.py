"""The user's workspace folder: its read rules (files), `.gitignore` matching (ignore)
and `@path` mentions in chat messages (mentions)."""
