"""The example messages of docs/email.md, made by a real game: three players, a fixed server
seed and fixed times, played through the judge's own pipeline (ingest, tick, the outbox
written as .eml files). ``python tests/judge/email_examples.py`` prints them as the docs show
them (long lines cut with "…", passwords, hashes and tokens left out as "…");
test_email_doc.py plays the game again and checks every example against what was sent.
"""

from __future__ import annotations

import email
import re
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

JUDGE = "judge@example.org"
PLAYERS = ("ani", "alex", "frank")
SEED = bytes.fromhex("5eed" * 16)
WIDTH = 92


def play(folder: Path, monkeypatch=None) -> dict[str, dict]:
    """Play the example game in ``folder``; the messages, by name, each {"to", "subject",
    "text", "files", "mail"} ("mail": what the player sent, for answers)."""
    import secrets
    from types import SimpleNamespace

    from pbem.mail import addresses, deadlines, judge, letters
    from pbem.mail import ingest as pipeline
    from pbem.mail.send import write_due
    from pbem.protocol import commands, loading
    from pbem.store import Store

    fixed = SimpleNamespace(token_bytes=lambda n: SEED[:n], token_hex=secrets.token_hex)
    if monkeypatch is not None:
        monkeypatch.setattr(commands, "secrets", fixed)
    else:
        commands.secrets = fixed
    store = Store(folder / "judge.db")
    addresses.create_game(store, "g1", "tortuga", list(PLAYERS), {}, {p: f"{p}@example.org" for p in PLAYERS},
                          "g1-table@lists.example.org", at="2030-01-01T10:00:00Z", start=True,
                          deadline_seconds=48 * 3600, deadlines={"remind": 12 * 3600, "grace": 0, "on_late": "default"})
    sent: list[dict] = []

    def flush(now: str) -> list[dict]:
        out = folder / now.replace(":", "")
        out.mkdir()
        write_due(store, out, now, JUDGE)
        new = []
        for path in sorted(out.glob("*.eml"), key=lambda f: int(f.name.split("-")[0])):
            message = email.message_from_bytes(path.read_bytes(), policy=default)
            new.append({"to": str(message["To"]), "subject": str(message["Subject"]),
                        "text": message.get_body(("plain",)).get_content().replace("\r\n", "\n"),
                        "files": [a.get_filename() for a in message.iter_attachments()]})
        sent.extend(new)
        return new

    def mail(player: str, body: str, at: str) -> list[dict]:
        msg = EmailMessage()
        msg["From"], msg["To"] = f"{player.title()} <{player}@example.org>", JUDGE
        msg["Subject"] = f"Re: [g1] private message for {player}: round 1, roll step 1"
        msg["Message-ID"] = f"<{player}.{at[11:13]}{at[14:16]}@mail.example.org>"
        msg.set_content(body)
        pipeline.ingest(store, msg.as_bytes(), at, (JUDGE,))
        return flush(at)

    welcome = flush("2030-01-01T10:00:00Z")
    password = {m["to"].split("@")[0]: re.search(r"password for this game: (\S+)", m["text"]).group(1)
                for m in welcome}
    session = loading.load(store, "g1")
    choice = {p: session.rules.default(session.state, p, "select") for p in PLAYERS}
    messages = {"welcome": welcome[0]}
    body = (f"Hi judge,\n\npassword {password['ani']}\nseal {choice['ani']}\n\nThanks,\nAni\n\n"
            f"Sent from my iPhone\n")
    # the answer only confirms her seal: held for her next message; none comes, so it goes
    # alone once its 10 minutes are over
    assert mail("ani", body, "2030-01-01T10:05:00Z") == []
    anis = body
    body = f"password {password['alex']}\nreveal A 0000000000000000000000000000000000000000\n"
    messages["refusal"] = {**mail("alex", body, "2030-01-01T10:06:00Z")[0], "mail": body}  # a refusal: at once
    messages["answer"] = {**flush("2030-01-01T10:15:00Z")[0], "mail": anis}
    deadlines.tick(store, "2030-01-02T22:00:00Z")
    messages["reminder"] = next(m for m in flush("2030-01-02T22:00:00Z") if m["to"] == "frank@example.org")
    # alex seals; his answer waits, and frank's seal five minutes later resolves the step
    assert mail("alex", f"password {password['alex']}\nseal {choice['alex']}\n-- \nAlex\n",
                "2030-01-02T22:05:00Z") == []
    body = f"password {password['frank']}\nseal {choice['frank']}\n"
    moment = mail("frank", body, "2030-01-02T22:10:00Z")
    messages["moment"] = {**next(m for m in moment if m["to"] == "frank@example.org"), "mail": body}
    messages["carried"] = next(m for m in moment if m["to"] == "alex@example.org")
    messages["summary"] = next(m for m in moment if m["to"] == "ani@example.org")
    messages["list"] = next(m for m in moment if m["to"].startswith("g1-table"))
    # the rest of the game: every player late, the default for each (no mail for those moves,
    # for speed), then the final result as the judge mails it when the game ends
    store.write_hooks.remove(judge.watch)
    from pbem.protocol import reports
    while not session.finished:
        session = loading.load(store, "g1")
        waiting = reports.waiting(session)
        if waiting:
            session = commands.nmr(store, "g1", waiting[0]["player"], force=True, at="2030-01-02T22:20:00Z")
    with store.transaction():
        letters.queue_summary(store, session, None, "2030-01-02T22:20:00Z", final=True)
    messages["result"] = next(m for m in flush("2030-01-02T22:20:00Z") if m["to"] == "ani@example.org")
    return messages


_SECRET = re.compile(r"\b[0-9a-z]{5}-[0-9a-z]{5}-[0-9a-z]{5}\b|\b[0-9a-f]{16,}\b|pbem1\.[\w.-]+")


def shown(text: str) -> str:
    """A message as the docs show it: secrets and hashes as "…", long lines cut."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        line = _SECRET.sub("…", line)
        out.append(line if len(line) <= WIDTH else line[: WIDTH - 1] + "…")
    return "\n".join(out)


def matches(shown_text: str, real: str) -> bool:
    """Whether every line the docs show is, in order, a line of the real message ("…" stands
    for anything within a line; the docs may leave lines out where they show "…" alone)."""
    lines = real.rstrip("\n").split("\n")
    at = 0
    for line in shown_text.split("\n"):
        if line == "…":
            continue
        pattern = re.compile(".*?".join(re.escape(piece) for piece in line.split("…")) + ("" if line.endswith("…") else r"\Z"))
        while at < len(lines) and not pattern.match(lines[at]):
            at += 1
        if at == len(lines):
            return False
        at += 1
    return True


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        for name, message in play(Path(folder)).items():
            print(f"#### {name}: To {message['to']} | Subject: {message['subject']} | files {message['files']}")
            if "mail" in message:
                print(message["mail"])
                print("----")
            print(shown(message["text"]))
