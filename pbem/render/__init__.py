"""Rendering: view models, per-format escaping and the Jinja environment.

``summary`` has the entry points (public round summaries, private messages, the final
result); ``record`` replays a log into per-round public views; ``escape`` holds the escaping
rules of the four formats; ``environment`` finds the templates. jinja2 is imported only when
something is rendered, so importing this package stays cheap.
"""
