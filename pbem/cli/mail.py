"""The mail judge's commands, under 'pbem mail': fetch mail by IMAP, send the outbox, list what waits.

The 'pbem mail' group itself is here: judge, deadlines and run add their commands to it, and
tell of a message taken in or sent with the lines here (ingest_line, send_line)."""


from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import DbOption, JsonErrorsGroup, JsonOption, emit, fail, handled, open_store, safe

app = typer.Typer(
    name="mail",
    cls=JsonErrorsGroup,
    help="The email judge: take players' mail in (ingest, fetch), send what the judge has queued, see what waits, or run it all by itself (run).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="mail")


def _check_security(value: Optional[str]) -> Optional[str]:
    if value is not None and value not in ("starttls", "tls", "plain"):
        raise typer.BadParameter(f"{value!r}: use starttls (port 587), tls (port 465) or plain (a local relay)")
    return value


def _check_server(value: Optional[str]) -> Optional[str]:
    if value is not None:
        from ..mail.config import MailConfigError, parse_server
        try:
            parse_server(value)
        except MailConfigError as exc:
            raise typer.BadParameter(str(exc)) from None
    return value


def _when(at: Optional[str]) -> str:
    return at.replace("T", " ").replace("Z", " UTC") if at else "-"


@app.command("send")
@handled
def send(smtp: Annotated[Optional[str], typer.Option("--smtp", callback=_check_server, help="SMTP server as HOST:PORT (default: smtp_host in the config file).", show_default=False)] = None,
         security: Annotated[Optional[str], typer.Option("--security", callback=_check_security, help="starttls, tls or plain (default: starttls).", show_default=False)] = None,
         user: Annotated[Optional[str], typer.Option("--user", help="SMTP login; the password comes from $PBEM_SMTP_PASSWORD or a chmod 600 config file, never an option.", show_default=False)] = None,
         config_file: Annotated[Optional[Path], typer.Option("--config", help="Mail config file (default: $PBEM_MAIL_CONFIG, else ~/.config/pbem/mail.toml).", show_default=False)] = None,
         from_address: Annotated[Optional[str], typer.Option("--from", help="The judge's address, the From of every message.", show_default=False)] = None,
         to_dir: Annotated[Optional[Path], typer.Option("--to-dir", help="Write each message as a .eml file into this folder instead of sending it.", show_default=False)] = None,
         at: Annotated[Optional[str], typer.Option("--at", metavar="TIME", show_default=False, help="Act as if it were TIME (UTC, 2030-01-02T10:00:00Z) instead of now: what is due then is sent (a held answer once its time has come), and marked sent at TIME.")] = None,
         db: DbOption = None, as_json: JsonOption = False):
    """Send every queued message that is due, and mark each one sent (or failed, for a retry).

    One SMTP connection per run. A message the server refuses for now (4xx) is retried
    later (after 1 minute, then 2, 4, ... at most an hour, for up to 3 days); one it refuses
    for good (5xx) is failed at once and the moderator told; a lost connection ends the run
    and leaves the rest queued. Exit status 1 when any message failed or was left: run it
    again later (from cron, say); nothing is ever sent twice.

    \b
    Example: PBEM_SMTP_PASSWORD=... pbem mail send --smtp smtp.example.org:587 --user judge@example.org --from judge@example.org
    Example: pbem mail send --to-dir outgoing/     (write .eml files to send by hand)
    Example: pbem mail send --to-dir outgoing/ --at 2030-01-02T10:15:00Z
    """
    import os

    from ..mail.config import load_config, with_overrides
    from ..mail.send import send_due, write_due
    from ..store.event import utc_now
    from ..store.lock import DatabaseLock

    if to_dir is not None and smtp is not None:
        raise typer.BadParameter("give --smtp (send) or --to-dir (write files), not both")
    from ..store.event import AT_PATTERN
    if at is not None and not AT_PATTERN.fullmatch(at):
        raise typer.BadParameter(f"--at {at!r} is not a time; give one in UTC like 2030-01-02T10:00:00Z")
    clock = (lambda: at) if at is not None else utc_now
    config = with_overrides(load_config(config_file, os.environ), smtp=smtp, security=security,
                            user=user, judge_address=from_address)
    store = open_store(db)
    # Shared: sends take turns row by row (claims), but none runs beside 'pbem mail run'.
    with DatabaseLock(store.path, exclusive=False):
        # The only clock: the library takes the time (and a clock for long runs) as parameters.
        if to_dir is not None:
            if not config.judge_address:
                typer.echo("pbem: note: no judge address (--from, or judge_address in the mail config): the files "
                           "say From: judge@ the Message-IDs' domain, which players cannot answer", err=True)
            report = write_due(store, to_dir, clock(), config.judge_address, clock=clock, config=config)
        else:
            report = send_due(store, config, clock(), clock=clock)
    lines = [send_line(r) for r in report.results]
    totals = [f"{len(report.sent)} {'written' if to_dir else 'sent'}", f"{len(report.failed)} failed"]
    if report.left:
        totals.append(f"{report.left} not tried")
    lines.append(", ".join(totals) if report.results or report.left else "nothing due to send")
    from ..store import outbox as box
    waiting = box.held_waiting(store, clock())
    if waiting:
        lines.append(f"{len(waiting)} answer{'s' if len(waiting) != 1 else ''} held for the players' next "
                     f"message{'s' if len(waiting) != 1 else ''}; alone by {_when(max(r.held_until for r in waiting))} "
                     f"at the latest")
    data, problem = report.as_dict(), None
    if not report.ok:
        given_up = sum(1 for r in report.failed if r.given_up)
        waiting = len(report.failed) - given_up + report.left
        reason = f"stopped: {report.stopped}; " if report.stopped else ""
        parts = []
        if waiting or not given_up:
            parts.append(f"{waiting} message{'s' if waiting != 1 else ''} stay{'' if waiting != 1 else 's'} "
                         "queued for the next 'pbem mail send'")
        if given_up:
            parts.append(f"{given_up} message{'s' if given_up != 1 else ''} failed for good "
                         "(refused by the server: 'pbem status GAME' says what helps)")
        problem = f"{reason}{'; '.join(parts)} (see 'pbem mail outbox')"
        data.update(error=problem, code=1)  # one JSON document: the report, with the error in it
    emit(data, as_json, "\n".join(lines))
    for note in report.notes:  # the messages went all the same; the moderator hears why they lack something
        typer.echo(f"pbem: note: {note}", err=True)
    if problem:
        typer.echo(f"pbem: {problem}", err=True)
        raise typer.Exit(1)


def ingest_line(r) -> str:
    """One line for a message taken in (ingest, fetch, run): 'KEY (g1, ani): applied; answer queued'."""
    who = f" ({r.game}, {safe(r.player)})" if r.game else (f" from {safe(r.sender)}" if r.sender else "")
    answered = "; answer queued" if r.answered else ""
    return f"{safe(r.key)[:80]}{who}: {r.outcome}{answered}"


def send_line(r) -> str:
    """One line for a message sent (or written) or failed: 'sent #12 g1 answer to ...'."""
    what = f"#{r.id} {safe(r.game)} {r.kind} to {r.recipient}: {safe(r.subject)}"
    if r.outcome == "sent":
        return f"{'written' if r.path else 'sent'} {what}" + (f" -> {r.path}" if r.path else "")
    if r.given_up:
        return f"FAILED {what}: {safe(r.error)}; given up, not retried (see pbem status {safe(r.game)})"
    return f"failed {what}: {safe(r.error)}; retry at {_when(r.next_try_at)}"


@app.command("outbox")
@handled
def outbox(game: Annotated[Optional[str], typer.Option("--game", help="Only this game's messages.", show_default=False)] = None,
           include_sent: Annotated[bool, typer.Option("--all", help="Include the messages sent already, and the reminders dropped because their request was settled.")] = False,
           db: DbOption = None, as_json: JsonOption = False):
    """The messages that wait to be sent, and those that failed for good: to whom, what, how often tried, and when next.

    A message that failed for good (a permanent refusal, or temporary ones for 3 days) is
    one line with the server's answer; 'pbem status GAME' says what helps.

    \b
    Example: pbem mail outbox --game g1
    Example: pbem mail outbox --all --json
    """
    from ..store import outbox as box

    rows = box.listing(open_store(db), game, include_sent, include_failed=True)
    lines = []
    for row in rows:
        head = f"#{row.id} {safe(row.game)} {row.kind} to {row.recipient}: {safe(row.subject)}"
        if row.state == "sent":
            lines.append(f"{head} - sent {_when(row.sent_at)}")
            continue
        if row.state == "failed":
            lines.append(f"{head} - FAILED {_when(row.failed_at)} after {row.attempts} attempt(s): "
                         f"{safe(row.last_error)}")
            continue
        if row.state == "dropped":
            lines.append(f"{head} - dropped {_when(row.failed_at)}: {safe(row.last_error)}")
            continue
        if row.held_until and not row.attempts:
            tail = (f" - held until {_when(row.held_until)} for the player's next message "
                    f"(goes alone then, if none comes)")
        else:
            tail = f" - attempts {row.attempts}, next try {_when(row.next_try_at)}"
        if row.last_error:
            tail += f", last error: {safe(row.last_error)}"
        lines.append(head + tail)
    if not rows:
        lines.append("the outbox is empty: nothing waits" if not include_sent else "the outbox is empty")
    emit([row.as_dict() for row in rows], as_json, "\n".join(lines))


def _check_imap_security(value: Optional[str]) -> Optional[str]:
    if value is not None and value not in ("tls", "starttls", "plain"):
        raise typer.BadParameter(f"{value!r}: use tls (port 993), starttls (port 143) or plain (this machine only)")
    return value


@app.command("fetch")
@handled
def fetch(imap: Annotated[Optional[str], typer.Option("--imap", callback=_check_server, help="IMAP server as HOST[:PORT] (default: imap_host in the config file).", show_default=False)] = None,
          starttls: Annotated[bool, typer.Option("--starttls", help="Connect in plain text and switch to TLS (port 143) instead of IMAPS (port 993).")] = False,
          security: Annotated[Optional[str], typer.Option("--security", callback=_check_imap_security, help="tls, starttls or plain (plain only to this machine; default: tls).", show_default=False)] = None,
          user: Annotated[Optional[str], typer.Option("--user", help="IMAP login; the password comes from $PBEM_IMAP_PASSWORD or a chmod 600 config file, never an option.", show_default=False)] = None,
          folder: Annotated[Optional[str], typer.Option("--folder", help="The folder to fetch from (default: INBOX).", show_default=False)] = None,
          move_to: Annotated[Optional[str], typer.Option("--move-to", help="Move each message to this folder once ingested (default: flag it seen).", show_default=False)] = None,
          judge_address: Annotated[Optional[str], typer.Option("--judge", help="The judge's own address, never answered (default: judge_address in the config file).", show_default=False)] = None,
          config_file: Annotated[Optional[Path], typer.Option("--config", help="Mail config file (default: $PBEM_MAIL_CONFIG, else ~/.config/pbem/mail.toml).", show_default=False)] = None,
          db: DbOption = None, as_json: JsonOption = False):
    """Fetch new mail from an IMAP folder, act on each message, then flag it seen (or move it).

    Takes the messages not yet processed, oldest first, and ingests them as 'pbem mail
    ingest' does; each is marked on the server only after what it caused is committed, so a
    run killed at any moment never applies a message twice. Run it from cron; send the
    answers with 'pbem mail send'.

    \b
    Example: PBEM_IMAP_PASSWORD=... pbem mail fetch --imap imap.example.org --user judge@example.org
    Example: pbem mail fetch --move-to Judged; pbem mail send     (settings in the config file)
    """
    import os

    from ..mail.config import load_config, with_imap_overrides
    from ..mail.fetch import FetchError, fetch as fetch_mail
    from ..protocol.commands import now_utc

    if starttls and security not in (None, "starttls"):
        raise typer.BadParameter(f"--starttls and --security {security} disagree; give one of them")
    config = with_imap_overrides(load_config(config_file, os.environ), imap=imap,
                                 security="starttls" if starttls else security, user=user,
                                 folder=folder, move_to=move_to, judge_address=judge_address)
    judges = tuple(a for a in [config.judge_address] if a)
    store = open_store(db)
    try:
        # The only clock: the library takes it as a parameter.
        report = fetch_mail(store, config, now_utc, judges)
    except FetchError as exc:
        fail(str(exc))
    lines = list(report.notes)
    if report.marked_late:
        lines.append(f"marked {report.marked_late} message(s) that an earlier run ingested but did not mark")
    lines += [f"uid {uid}: {ingest_line(result)}" for uid, result in report.results]
    if not report.results:
        lines.append(f"no new messages in {config.imap_folder} at {config.imap_server}")
    emit(report.as_dict(), as_json, "\n".join(lines))
    if report.stopped:
        reason = f"stopped: {report.stopped}; what was fetched before is kept, run 'pbem mail fetch' again"
        if as_json:  # the report above is the one JSON document; it says "stopped" too
            typer.echo(f"pbem: {reason}", err=True)
            raise typer.Exit(1)
        fail(reason)
