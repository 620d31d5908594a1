"""Hostile mail: messages shaped to make a mail parser slow or greedy, each built to a size.

Used by ``bench_hostile_mail.py`` (each shape just under the judge's 1 MiB limit) and by
``tests/judge/test_hostile_mail.py`` (each shape small, with the outcome it must have).
Every message comes from a registered player with the right password, so a message that is
read goes through the whole pipeline: ``BODY`` is what a message that is read applies.

``SHAPES`` maps a name to ``(build, expected)``: ``build(budget, password)`` returns the
message's bytes, at most ``budget`` of them; ``expected`` is the outcome of the small
version (``budget=SMALL``): a limit's name (in the refusal) or "applied".
"""

from __future__ import annotations

import base64
import itertools

SENDER = "ani@example.org"
SMALL = 64 * 1024
FULL = (1 << 20) - 4096  # just under the judge's 1 MiB
_numbers = itertools.count(1)


def _head(password: str, subject: str = "[g1] move", extra: bytes = b"", sender: bytes | None = None) -> bytes:
    sender = sender if sender is not None else SENDER.encode()
    return (b"From: " + sender + b"\nTo: judge@example.org\nSubject: " + subject.encode()
            + b"\nMessage-ID: <hostile." + str(next(_numbers)).encode() + b"@example.org>\nMIME-Version: 1.0\n" + extra)


def body(password: str) -> bytes:
    return f"password {password}\nstatus\n".encode()


def _fit(unit: bytes, budget: int, fixed: int) -> int:
    return max(1, (budget - fixed - 200) // len(unit))


def encoded_words_from(budget: int, password: str) -> bytes:
    word = b" =?utf-8?q?a?="
    n = _fit(word, budget, 300)
    return _head(password, sender=b"".join([word] * n) + b" <" + SENDER.encode() + b">") + b"\n" + body(password)


def encoded_words_subject(budget: int, password: str) -> bytes:
    word = b" =?x-bogus?b?////?= =?utf-8?q?=FF=FE?="
    n = _fit(word, budget, 300)
    return _head(password, subject="[g1]" + (b"".join([word] * n)).decode()) + b"\n" + body(password)


def references(budget: int, password: str) -> bytes:
    ids = [b"<r%d@x>" % i for i in range(_fit(b" <r99999@x>", budget, 300))]
    ids += ids[: len(ids) // 4]  # repeats, for the de-duplication
    ids = ids[: _fit(b" <r99999@x>", budget, 300)]
    refs = b"References: " + b"\n ".join(b" ".join(ids[i:i + 8]) for i in range(0, len(ids), 8)) + b"\n"
    return _head(password, extra=b"In-Reply-To: <r1@x>\n" + refs) + b"\n" + body(password)


def many_headers(budget: int, password: str) -> bytes:
    line = b"X-A: b\n"
    return _head(password, extra=line * _fit(line, budget, 300)) + b"\n" + body(password)


def content_type_parameters(budget: int, password: str) -> bytes:
    n = _fit(b";\n a99999=b", budget, 300)
    params = b"".join(b";\n a%d=b" % i for i in range(n))
    return _head(password, extra=b"Content-Type: text/plain; charset=utf-8" + params + b"\n") + b"\n" + body(password)


def rfc2231_continuations(budget: int, password: str) -> bytes:
    n = _fit(b";\n filename*99999*=%41%41", budget, 600)
    pieces = b"".join(b";\n filename*%d*=%%41%%41" % i for i in range(n))
    return _head(password, extra=b"Content-Type: multipart/mixed; boundary=b\n") + (
        b"\n--b\nContent-Type: text/plain\n\n" + body(password)
        + b"--b\nContent-Type: application/octet-stream\nContent-Disposition: attachment; filename*0*=utf-8''x"
        + pieces + b"\n\nAAAA\n--b--\n")


def mime_parts(budget: int, password: str) -> bytes:
    part = b"--b\n\n" + b"x" * 200 + b"\n"  # long lines: the limit of lines is not what stops it
    n = _fit(part, budget, 400)
    return (_head(password, extra=b"Content-Type: multipart/mixed; boundary=b\n") + b"\n--b\nContent-Type: text/plain\n\n"
            + body(password) + part * n + b"--b--\n")


def nested(budget: int, password: str, depth: int | None = None) -> bytes:
    """Multipart in multipart ``depth`` deep (as deep as the budget allows), the commands at the bottom."""
    open_ = [b"--b%d\nContent-Type: multipart/mixed; boundary=b%d\n\n" % (i, i + 1) for i in range(1, 20000)]
    size = 500
    n = 0
    while n < len(open_) and size + 2 * len(open_[n]) < budget and (depth is None or n < depth - 1):
        size += 2 * len(open_[n])
        n += 1
    out = [_head(password, extra=b"Content-Type: multipart/mixed; boundary=b1\n"), b"\n"]
    out += open_[:n]
    out.append(b"--b%d\nContent-Type: text/plain\n\n" % (n + 1) + body(password))
    out += [b"--b%d--\n" % (i + 1) for i in range(n, -1, -1)]
    return b"".join(out)


def nested_40(budget: int, password: str) -> bytes:
    return nested(budget, password, depth=40)


def nested_rfc822(budget: int, password: str) -> bytes:
    """A forward of a forward of a forward ..., each attached whole (message/rfc822)."""
    layer = b"Content-Type: message/rfc822\n\nFrom: x@example.org\n"
    n = _fit(layer, budget, 400)
    return (_head(password, extra=b"Content-Type: multipart/mixed; boundary=b\n") + b"\n--b\nContent-Type: text/plain\n\n"
            + body(password) + b"--b\n" + layer * n + b"\nx\n--b--\n")


def short_lines(budget: int, password: str) -> bytes:
    return _head(password) + b"\n" + body(password) + b"x\n" * _fit(b"x\n", budget, 300)


def base64_short_lines(budget: int, password: str) -> bytes:
    """Short lines packed into a base64 body: few lines of bytes, many lines of text."""
    text = body(password) + b"x\n" * _fit(b"x\n", budget * 3 // 4 - 2000, 300)
    return (_head(password, extra=b"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n")
            + b"\n" + base64.encodebytes(text))


def long_line(budget: int, password: str) -> bytes:
    return _head(password) + b"\n" + body(password) + b"x" * (budget - 400) + b"\n"


def html_breaks(budget: int, password: str) -> bytes:
    n = _fit(b"<br>", budget, 400)
    return (_head(password, extra=b"Content-Type: text/html; charset=utf-8\n") + b"\n<p>"
            + body(password).replace(b"\n", b"<br>") + b"<br>" * n + b"</p>\n")


def html_nested_tags(budget: int, password: str) -> bytes:
    n = _fit(b"<div><blockquote></blockquote></div>", budget, 400) // 2
    return (_head(password, extra=b"Content-Type: text/html; charset=utf-8\n") + b"\n<p>"
            + body(password).replace(b"\n", b"<br>") + b"<div><blockquote>" * n + b"</blockquote></div>" * n + b"\n")


def html_text(budget: int, password: str) -> bytes:
    """A big HTML body with few tags: text and entities."""
    n = _fit(b"&amp; word ", budget, 400)
    return (_head(password, extra=b"Content-Type: text/html; charset=utf-8\n") + b"\n<p>"
            + body(password).replace(b"\n", b"<br>") + b"&amp; word " * n + b"</p>\n")


def big_attachment(budget: int, password: str) -> bytes:
    """A plain body and one large base64 attachment (a photo): read, the attachment skipped."""
    data = base64.encodebytes(bytes(range(256)) * ((budget * 3 // 4 - 20000) // 256))
    return (_head(password, extra=b"Content-Type: multipart/mixed; boundary=b\n") + b"\n--b\nContent-Type: text/plain\n\n"
            + body(password) + b"--b\nContent-Type: image/jpeg\nContent-Transfer-Encoding: base64\n"
            b"Content-Disposition: attachment; filename=photo.jpg\n\n" + data + b"--b--\n")


def bad_charsets(budget: int, password: str) -> bytes:
    """Parts in charsets that do not exist, with bytes that fit no charset."""
    n = 90  # under the limit of MIME parts: each part is large instead
    part = (b"--b\nContent-Type: text/plain; charset=x-no-such-charset-\xff\n\n"
            + (b"> \xff\xfe\x80 caf\xe9" * 10 + b"\n") * max(1, (budget - 1000) // n // 101))
    return (_head(password, extra=b"Content-Type: multipart/mixed; boundary=b\n") + b"\n--b\nContent-Type: text/plain\n\n"
            + body(password) + part * n + b"--b--\n")


def binary_garbage(budget: int, password: str) -> bytes:
    import random
    noise = random.Random(7).randbytes((budget - 400) * 200 // 201).replace(b"\n", b" ")
    chunks = b"\n".join(noise[i:i + 200] for i in range(0, len(noise), 200))
    return _head(password) + b"\n" + body(password) + chunks + b"\n"


def no_blank_line(budget: int, password: str) -> bytes:
    """Header lines without end: no blank line before a body."""
    line = b"X-Filler: " + b"a" * 60 + b"\n"
    return _head(password) + line * _fit(line, budget, 300)


def quoted_printable_lines(budget: int, password: str) -> bytes:
    """Soft line breaks: thousands of =\\n in a quoted-printable body."""
    return (_head(password, extra=b"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n")
            + b"\n" + body(password) + b"a=\n" * _fit(b"a=\n", budget, 300))


def at_limits_parts(budget: int, password: str) -> bytes:
    """Just inside several limits at once: 99 parts with 199 parameters in all (one part
    with 49 of them), an encoded word in each, the rest of the budget in quoted text."""
    params = b"".join(b";\n p%d=v" % i for i in range(48))
    n = 98 if budget >= 64 * 1024 else 20
    part = b"--b\nContent-Type: text/plain; name==?utf-8?q?n?=\n\n> x\n"
    first = b"--b\nContent-Type: text/plain; charset=utf-8; name==?utf-8?q?n?=" + params + b"\n\n> x\n"
    filler = b"> quoted text that is not a command\n" * max(0, min(14000, (budget - 1000 - n * len(part)) // 36))
    return (_head(password, extra=b"Content-Type: multipart/mixed; boundary=b\n") + b"\n--b\nContent-Type: text/plain\n\n"
            + body(password) + filler + first + part * (n - 1) + b"--b--\n")


def at_limit_depth(budget: int, password: str) -> bytes:
    """Nested exactly as deep as the limit allows, the commands at the bottom: read."""
    from pbem.mail.limits import MAX_DEPTH
    return nested(budget, password, depth=MAX_DEPTH)


def at_limit_html(budget: int, password: str) -> bytes:
    """An HTML-only body just under the HTML limits: 9,900 tags in 500 KiB."""
    from pbem.mail.limits import MAX_HTML_BYTES, MAX_HTML_TAGS
    size = min(budget, MAX_HTML_BYTES) - 2000
    tags = min(MAX_HTML_TAGS - 100, size // 8)
    unit = b"<b>x</b>"
    text = b"y" * max(0, (size - tags * 4) // max(1, tags // 2))
    return (_head(password, extra=b"Content-Type: text/html; charset=utf-8\n") + b"\n<p>"
            + body(password).replace(b"\n", b"<br>") + (unit.replace(b"x", text)) * (tags // 2) + b"</p>\n")


def at_limit_lines(budget: int, password: str) -> bytes:
    """Just under the limit of lines, each a quoted line the judge must look at."""
    from pbem.mail.limits import MAX_LINES
    n = min(MAX_LINES - 100, (budget - 400) // 12)
    line = b"> quoted " + b"x" * max(1, (budget - 400) // n - 10) + b"\n"
    return _head(password) + b"\n" + body(password) + line * n


def at_limit_headers(budget: int, password: str) -> bytes:
    """999 header lines, 199 encoded words among them, under 100 KiB."""
    lines = b"".join(b"X-H%d: =?utf-8?q?caf=C3=A9?= v\n" % i for i in range(190))
    lines += b"".join(b"Received: from a%d by b; Mon, 1 Jan 2030 10:00:00 +0000\n" % i for i in range(800))
    return _head(password, extra=lines) + b"\n" + body(password)


SHAPES = {
    "encoded words in From": (encoded_words_from, "encoded words"),
    "encoded-word tricks in Subject": (encoded_words_subject, "encoded words"),
    "References ids (repeated)": (references, "applied"),
    "many header lines": (many_headers, "header lines"),
    "Content-Type parameters": (content_type_parameters, "parameters"),
    "RFC 2231 continuations": (rfc2231_continuations, "parameters"),
    "MIME parts": (mime_parts, "MIME parts"),
    "multipart nested deep": (nested, "MIME parts"),
    "multipart nested 40 deep": (nested_40, "nesting depth"),
    "message/rfc822 nested deep": (nested_rfc822, "MIME parts"),
    "short lines": (short_lines, "lines"),
    "short lines in base64": (base64_short_lines, "lines of text"),
    "one long line": (long_line, "applied"),
    "<br> in an HTML-only body": (html_breaks, "HTML tags"),
    "nested HTML tags": (html_nested_tags, "applied"),
    "HTML text": (html_text, "applied"),
    "a large attachment": (big_attachment, "applied"),
    "bad charsets": (bad_charsets, "applied"),
    "binary garbage": (binary_garbage, "applied"),  # read past as chat (issue 30): no command in it
    "header lines without end": (no_blank_line, "refused"),
    "quoted-printable soft breaks": (quoted_printable_lines, "lines"),
    "at the limits: parts, parameters": (at_limits_parts, "applied"),
    "at the limit: depth": (at_limit_depth, "applied"),
    "at the limits: HTML": (at_limit_html, "applied"),
    "at the limit: lines": (at_limit_lines, "applied"),
    "at the limits: header lines": (at_limit_headers, "applied"),
}
