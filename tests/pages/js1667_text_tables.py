"""The Unicode tables of pbem/pages/js/text.js, made from Python's own ``unicodedata`` and
``str`` methods, so that the page reads a choice's words, numbers and names exactly as the
Python rules do (str.casefold, str.isdecimal/int, str.split, and unicodedata.normalize
within the Unicode version Python knows), whatever Unicode version the browser has.

``python tests/pages/js1667_text_tables.py`` prints the block between the markers of
text.js; tests/pages/test_js_1667.py checks that the file holds exactly this block.
"""

from __future__ import annotations

import json
import sys
import unicodedata

BEGIN = "// BEGIN TABLES (tests/pages/js1667_text_tables.py)"
END = "// END TABLES"


def _ranges(cps):
    out = []
    for cp in cps:
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def tables() -> dict:
    single, multi = {}, {}
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        f = c.casefold()
        if f != c:
            if len(f) == 1:
                single[cp] = ord(f) - cp
            else:
                multi[cp] = [ord(x) for x in f]
    runs = []  # [first, last, step, delta]: cp first, first+step, ... last folds to cp + delta
    for cp in sorted(single):
        d = single[cp]
        if runs:
            first, last, step, delta = runs[-1]
            if delta == d and ((step == 0 and cp - last in (1, 2)) or (step and cp - last == step)):
                runs[-1][1], runs[-1][2] = cp, cp - first if step == 0 else step
                continue
        runs.append([cp, cp, 0, d])
    for r in runs:
        r[2] = r[2] or 1
    unassigned = _ranges(cp for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Cn")
    zeros = [cp for cp in range(0x110000) if chr(cp).isdecimal() and unicodedata.decimal(chr(cp)) == 0]
    for z in zeros:  # every decimal digit is one of ten in a row, 0 to 9
        assert all(unicodedata.decimal(chr(z + i), None) == i for i in range(10))
    assert sum(chr(cp).isdecimal() for cp in range(0x110000)) == 10 * len(zeros)
    space = [cp for cp in range(0x110000) if chr(cp).isspace()]
    return {"unicode": unicodedata.unidata_version, "fold_runs": runs,
            "fold_multi": {str(k): v for k, v in sorted(multi.items())},
            "unassigned": unassigned, "zeros": zeros, "space": space}


def block() -> str:
    t = tables()
    lines = ["  " + BEGIN, f"  var UNICODE = {json.dumps(t['unicode'])};"]
    for name in ("fold_runs", "fold_multi", "unassigned", "zeros", "space"):
        lines.append(f"  var {name.upper()} = {json.dumps(t[name], separators=(',', ':'))};")
    lines.append("  " + END)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(block() + "\n")
