"""Reading files under path rules, below everything that reads them; and
rewriting a document whole.

`walk` walks a path by descriptor (what is opened is what was checked); `read`
applies the rules of every read (containment, no hard links, bounded, UTF-8) on top
of it. Both need only `errors`, so skill discovery, the workspace and the tools can
all read through them: no module opens a skill's or the workspace's file by a path
string of its own. `write` replaces a file atomically (the trust store, a
skills.lock): whole or not at all; `user_cache` reads and writes the user cache
folder's files through it, under a lock.
"""
