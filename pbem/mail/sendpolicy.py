"""The email policy the judge composes its mail with: ``email.policy.default``, with each
header value parsed once; and ``wire_bytes``, the message as ``smtplib`` puts it on the wire,
made faster.

Building a message with the default policy parses every header it sets into a header object,
and parses again each Content-Type that ``set_boundary`` or ``set_param`` leave as plain text,
every time it is read (``get_content_type`` while composing and while flattening). Most of
those values are the same in every message (the judge's address, a player's address,
``text/plain; charset="utf-8"``, ``7bit``, ``1.0``...), and parsing them was most of the
cost of composing a message. A header object is a pure function of its (name, value) and
nothing changes one in place (a changed header is a new one), so ``SEND_POLICY`` keeps the
ones it made and hands the same object out again: the messages, and their bytes, are exactly
those of the default policy (tests/judge/test_compose_bytes.py compares them).

``wire_bytes(message)`` is what ``smtplib.SMTP.send_message`` hands to ``sendmail``: the
message flattened with CRLF line ends and, as smtplib's generator does, a body line starting
"From " written as ">From ". The standard generator finds those lines with a regular
expression and splits every body into lines to join them again with CRLF, over the whole
base64 text of each board picture (about 100 kB); ``_Wire`` skips the search when "From "
is nowhere in the body and replaces the line ends in one go when they are all "\n": the
same bytes (tests/judge/test_compose_bytes.py).
"""

from __future__ import annotations

from email.generator import BytesGenerator
from email.policy import EmailPolicy, linesep_splitter

KEPT = 4096  # header objects kept; the values seen once (Message-ID, Date) make the rest


class HeadersOnce(EmailPolicy):
    """``email.policy.default``, each header value parsed once (see the module)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        # shared by the clones (``clone`` copies them): the header objects made, and the class
        # of each header name (the registry makes a new class on every lookup)
        object.__setattr__(self, "_made", {})
        object.__setattr__(self, "_classes", {})

    def __repr__(self):  # without the header objects kept
        kept = {"_made", "_classes", "header_factory"}
        return "HeadersOnce({})".format(", ".join(f"{name}={value!r}" for name, value in self.__dict__.items()
                                                 if name not in kept))

    def _class(self, name: str):
        key = name.lower()
        kind = self._classes.get(key)
        if kind is None:
            if len(self._classes) >= KEPT:
                self._classes.clear()
            kind = self._classes[key] = self.header_factory[name]
        return kind

    def _header(self, name: str, value: str):
        key = (name, value)
        header = self._made.get(key)
        if header is None:
            if len(self._made) >= KEPT:
                self._made.clear()
            header = self._made[key] = self._class(name)(name, value)  # as header_factory(name, value)
        return header

    def header_max_count(self, name):
        return self._class(name).max_count

    def header_store_parse(self, name, value):
        if hasattr(value, "name") or type(value) is not str or len(value.splitlines()) > 1:
            return super().header_store_parse(name, value)  # as it is, or the default's refusal
        return (name, self._header(name, value))

    def header_fetch_parse(self, name, value):
        if hasattr(value, "name"):
            return value
        return self._header(name, "".join(linesep_splitter.split(value)))


SEND_POLICY = HeadersOnce()


def wire_bytes(message) -> bytes:
    """``message`` as ``smtplib.SMTP.send_message`` sends it (for ASCII addresses, no Bcc)."""
    import io
    with io.BytesIO() as buffer:
        _Wire(buffer).flatten(message, linesep="\r\n")
        return buffer.getvalue()


def _has_surrogates(text: str) -> bool:
    """Whether ``text`` holds surrogate-escaped bytes (``email.utils._has_surrogates``, whose
    name is private to its module): only then does UTF-8 fail to encode it."""
    try:
        text.encode()
        return False
    except UnicodeEncodeError:
        return True


class _Wire(BytesGenerator):
    """smtplib's generator (``BytesGenerator(fp)``: "From " mangled), the same bytes faster."""

    def _handle_text(self, msg):
        payload = msg._payload
        if (self._mangle_from_ and isinstance(payload, str) and "From " not in payload
                and not _has_surrogates(payload)):
            self._mangle_from_ = False  # nothing to mangle
            try:
                super()._handle_text(msg)
            finally:
                self._mangle_from_ = True
        else:
            super()._handle_text(msg)

    def _write_lines(self, lines):
        if lines and "\r" not in lines:
            self.write(lines.replace("\n", self._NL))  # what splitting at "\n" and joining does
        else:
            super()._write_lines(lines)
