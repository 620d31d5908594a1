"""Game-agnostic adjudication: the rules of the log, and the commands that write it.

Its rooms, from the top down (each imports only rooms below it; pyproject.toml checks it):
    away, commands, submissions   the commands that write a game (a move, a seat or the
                                  clock; pasted or mailed blocks)
    writing      one command as one transaction: load, validate, append, follow-ups
    cache        the snapshots a write leaves (status at each event, the whole state often)
    loading      a game's state at the head: from its snapshot, else by replaying the log
    offline      the blocks a player makes: signed submissions, sealing from a token
    session      a game's state rebuilt from its events, and the rules of the setup events
    moves        the rules of the events of play, and the sealed step they fill
    anonymous, discretion, seats, seedless   the other rules of events, parts of a session
    standin, reports, repeats, receipts      the stand-in's policy; what status and private
                  messages report; a submission seen before; the judge's signed receipts
    armour, commit, rng, signing, token      formats: armoured blocks, commitments, the
                  random source, signatures, the seal token
    canonical, errors, heads, snapshot, times   canonical JSON and hashes, the errors,
                  published heads, the snapshot's layout, timestamps
"""
