"""skillchat: a terminal chat runner that gives any LLM its user's Agent Skills."""

__version__ = "0.1.0"
