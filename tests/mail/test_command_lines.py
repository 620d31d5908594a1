"""command_lines: only the sender's new, unquoted text above the signature is read."""

from hypothesis import given
from hypothesis import strategies as st

from pbem.mail.message import command_lines


def test_plain_commands_stripped_in_order():
    assert command_lines("  game g1 \r\n\r\n\tSEAL B,C\r\nstatus  \n") == ["game g1", "SEAL B,C", "status"]


def test_signature_separator_with_or_without_space():
    assert command_lines("seal A\n-- \nAni\nstatus\n") == ["seal A"]
    assert command_lines("seal A\n--\nstatus\n") == ["seal A"]
    assert command_lines("seal A\n---\nstatus\n") == ["seal A", "---", "status"]


def test_quoted_lines_at_any_depth_with_or_without_space():
    text = "seal A\n> commit x\n>commit y\n>> commit z\n > > commit w\nstatus\n"
    assert command_lines(text) == ["seal A", "status"]


def test_attribution_lines_in_several_languages():
    for attribution in ("On Mon, 6 Jan 2025 at 10:00, Judge <judge@pbem.example.org> wrote:",
                        "Am 06.01.2025 um 10:00 schrieb Judge <judge@pbem.example.org>:",
                        "El lun, 6 ene 2025 a las 10:00, Judge (<judge@pbem.example.org>) escribió:",
                        "Le lun. 6 janv. 2025 à 10:00, Judge <judge@pbem.example.org> a écrit :",
                        "judge@pbem.example.org wrote:"):
        text = f"seal A\n\n{attribution}\n\n> commit x\n> status\n"
        assert command_lines(text) == ["seal A"], attribution


def test_attribution_wrapped_onto_two_lines():
    text = "seal A\nOn Mon, 6 Jan 2025 at 10:00 AM Tortuga Judge <\njudge@pbem.example.org> wrote:\n> x\n"
    assert command_lines(text) == ["seal A"]


def test_a_colon_line_not_before_a_quote_stays():
    assert command_lines("My orders:\nseal A\n\n> old\n") == ["My orders:", "seal A"]


def test_inline_replies_between_quotes_are_kept():
    text = "> Which die?\nseal A\n> And then?\nstatus\n> bye\n"
    assert command_lines(text) == ["seal A", "status"]


def test_forwarded_and_original_message_markers():
    for marker in ("---------- Forwarded message ---------", "-------- Forwarded Message --------",
                   "-----Original Message-----", "-------- Original Message --------",
                   "-----Ursprüngliche Nachricht-----", "Begin forwarded message:",
                   "Anfang der weitergeleiteten Nachricht:"):
        text = f"status\n\n{marker}\nFrom: Ani\nseal A\n"
        assert command_lines(text) == ["status"], marker


def test_outlook_header_block_without_marker():
    text = ("decide skull:raid\n\n________________________________\nFrom: Tortuga Judge <judge@x.org>\n"
            "Sent: Monday, January 6, 2025 10:00\nTo: René\nSubject: [g1] your move\n\ndecide skull:hunt\n")
    assert command_lines(text) == ["decide skull:raid"]
    # a "From:" line alone is not a header block
    assert command_lines("From: me\nseal A\n") == ["From: me", "seal A"]


def test_armour_marker_lines_are_not_forward_markers():
    text = "-----BEGIN PBEM SUBMISSION-----\nabc\n=0011aabb\n-----END PBEM SUBMISSION-----\nstatus\n"
    assert command_lines(text) == ["-----BEGIN PBEM SUBMISSION-----", "abc", "=0011aabb",
                                   "-----END PBEM SUBMISSION-----", "status"]


@given(st.text(max_size=400))
def test_never_a_quoted_or_empty_line(text):
    for line in command_lines(text):
        assert line and line == line.strip() and not line.startswith(">")


def test_modern_outlook_html_reply():
    """Outlook (365) puts the old mail, unquoted, under a rule and a bold header block."""
    from pbem.mail.message import html_to_text

    html = ('<div dir="ltr">seal B,C</div><div id="appendonsend"></div>'
            '<hr style="display:inline-block;width:98%" tabindex="-1"><div id="divRplyFwdMsg" dir="ltr">'
            '<font face="Calibri, sans-serif" style="font-size:11pt"><b>From:</b> Tortuga Judge '
            '&lt;judge@pbem.example.org&gt;<br><b>Sent:</b> Monday, January 6, 2025 10:00<br><b>To:</b> '
            'Ani<br><b>Subject:</b> [g1] your move</font><div>&nbsp;</div></div>'
            '<div>Reply with: seal CHOICE</div><div>commit 6ba2c455</div>')
    assert command_lines(html_to_text(html)) == ["seal B,C"]


# ---------------------------------------------------------------------- as people write (issue 16)

def test_sign_offs_and_the_name_after_them_are_not_read():
    assert command_lines("password x\nseal A\nThanks,\nAni\n") == ["password x", "seal A"]
    assert command_lines("seal A\nCheers, Ani") == ["seal A"]
    assert command_lines("seal A\nBest regards\nAni Smith\nACME Corp\n") == ["seal A"]
    assert command_lines("seal A\nViele Grüße\nLothar\n") == ["seal A"]
    assert command_lines("thanks!") == []


def test_a_sign_off_followed_by_a_command_is_no_sign_off():
    assert command_lines("thanks\nseal A") == ["thanks", "seal A"]
    assert command_lines("Best\nstatus") == ["Best", "status"]


def test_client_footers_and_disclaimers_end_the_text():
    assert command_lines("seal A\n\nSent from my iPhone\nstatus\n") == ["seal A"]
    assert command_lines("seal A\nGet Outlook for Android\nstatus") == ["seal A"]
    assert command_lines("seal A\nVon meinem iPhone gesendet\nstatus") == ["seal A"]
    assert command_lines("seal B\nCONFIDENTIALITY NOTICE: this mail...\nseal C") == ["seal B"]
    assert command_lines("seal B\nThis email and any attachments are confidential and intended solely for "
                         "the addressee.\nstatus") == ["seal B"]


def test_a_hash_or_salt_broken_by_spaces_is_joined():
    from pbem.mail.lines import read_lines
    salt = "ab" * 32
    assert read_lines([f"reveal A {salt[:40]} {salt[40:]}"]).commands[0].args == ("A", salt)
    assert read_lines([f"reveal A,E {salt[:10]} {salt[10:]}"]).commands[0].args == ("A,E", salt)
    assert read_lines([f"reveal vote 2 {salt}"]).commands[0].args == ("vote 2", salt)
    assert read_lines([f"reveal A {salt[:40]}"]).commands[0].args == ("A", salt[:40])  # short: refused later
    assert read_lines([f"commit {salt[:30]} {salt[30:]}"]).commands[0].args == (salt,)
    assert read_lines(["reveal 3"]).commands[0].verb == "choice"  # 1667's own reveal


def test_what_looks_like_a_choice():
    from pbem.games import tortuga, tortuga1667
    for text in ("A", "B,E", "A C", "BE", "none", "skull:raid", "board:alex:red", "a,c"):
        assert tortuga.looks_like_choice(text), text
    for text in ("Ani", "Thanks,", "bad", "Hi judge!", "Best regards", "How do I play?"):
        assert not tortuga.looks_like_choice(text), text
    for text in ("vote 2", "peek 2,4", "attack", "reveal 3"):
        assert tortuga1667.looks_like_choice(text), text
    for text in ("Thanks", "Hi all", "Ahoy mates!"):
        assert not tortuga1667.looks_like_choice(text), text
