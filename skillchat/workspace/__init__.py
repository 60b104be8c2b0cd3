"""The user's workspace folder: its read rules (files), `.gitignore` matching (ignore),
the bounded walk under those rules (walk), what list_files and search_files look at
(scope) and find (listing, search), and `@path` mentions in chat messages (mentions)."""
