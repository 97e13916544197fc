"""schemathesis hooks for APIConformanceTests: let the fuzzer reach games and tournaments.

Random ids almost never name a game, an invitation, a location or a tournament the fuzzing
player may see, so those operations would only ever answer 404. The test prepares a world
(NEARPLAY_CONFORMANCE_STATE, a JSON file): an open game of the player's with the opponent's
scores in, a pending invitation to the player, a location the player stands at and its
tournaments, and for each round a submission whose recording really gives its score. These
hooks put those ids into about three cases in four (chosen from the drawn value, so Hypothesis
can replay a case) and, for scores, the honest submission into three in four of the cases that
name a real round. Cases made to be refused (negative data) stay as drawn.

Positive cases that break a rule the document states in words, because no schema can, are not
sent (filter_case): they would be refused and positive_data_acceptance would fail on them.
"""
import itertools
import json
import os
import unicodedata

import schemathesis

with open(os.environ["NEARPLAY_CONFORMANCE_STATE"]) as f:
    STATE = json.load(f)

# The fuzzing player, whom it cannot block.
PLAYER = os.environ.get("NEARPLAY_CONFORMANCE_PLAYER", "alice")


def _whole(drawn):
    """The drawn path value as a whole number (schemathesis hands them over as text), or None
    for negative data (text that is no number, a negative number)."""
    if isinstance(drawn, bool):
        return None
    if isinstance(drawn, int):
        return drawn if drawn >= 0 else None
    if isinstance(drawn, str) and drawn.isascii() and drawn.isdigit():
        return int(drawn)
    return None


def _pick(drawn, choices):
    """A real id for three draws in four; negative data stays."""
    value = _whole(drawn)
    if value is None or not choices or value % 4 == 3:
        return drawn
    return str(choices[value % len(choices)])


_turn = itertools.count()


def _honest(case, submissions):
    """For a real game or entry: one of its rounds for three draws of n in four, and the honest
    submission of that round for three cases in four."""
    params = case.path_parameters
    rounds = submissions.get(str(params.get("id")), {})
    n = _whole(params.get("n"))
    if not rounds or n is None or n % 4 == 3:
        return
    # Round after round in turn: drawn values cluster at the minimum, so n itself would name
    # the same round again and again.
    params["n"] = str(1 + next(_turn) % len(rounds))
    body = rounds.get(params["n"])
    if body is None or not isinstance(case.body, dict):
        return
    score = case.body.get("score")
    if isinstance(score, int) and not isinstance(score, bool) and score % 4 != 3:
        case.body = dict(body)


def _negative(case):
    """Whether schemathesis made this case to be refused: it stays as it is."""
    meta = getattr(case, "meta", None)
    return meta is not None and meta.generation.mode.is_negative


@schemathesis.hook
def map_case(ctx, case):
    path = case.operation.path
    params = case.path_parameters
    if params is None or "id" not in params or _negative(case):
        return case
    if path.startswith("/v1/games/"):
        params["id"] = _pick(params["id"], STATE["games"])
        if path.endswith("/scores"):
            _honest(case, STATE["scores"])
    elif path.startswith("/v1/invitations/"):
        params["id"] = _pick(params["id"], STATE["invitations"])
    elif path.startswith("/v1/locations/"):
        params["id"] = _pick(params["id"], STATE["locations"])
    elif path.startswith("/v1/tournaments/"):
        params["id"] = _pick(params["id"], STATE["tournaments"])
        if path.endswith("/scores"):
            _honest(case, STATE["tournamentScores"])
    return case


# Default-ignorable code points outside the format category (Cf), which the lobby's names may not
# hold either: Unicode's DerivedCoreProperties, and the blank braille pattern U+2800.
_IGNORABLE = [(0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x2800, 0x2800),
              (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF)]
# The letters of the three look-alike scripts (NameRules.script in Sources/Lobby).
_SCRIPTS = {
    "Latin": [(0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F), (0x1E00, 0x1EFF), (0x2C60, 0x2C7F), (0xA720, 0xA7FF),
              (0xFF21, 0xFF3A), (0xFF41, 0xFF5A)],
    "Greek": [(0x370, 0x3FF), (0x1F00, 0x1FFF)],
    "Cyrillic": [(0x400, 0x52F), (0x1C80, 0x1C8F), (0x2DE0, 0x2DFF), (0xA640, 0xA69F)],
}


def _within(code, ranges):
    return any(low <= code <= high for low, high in ranges)


def _breaks_name_rules(text):
    """Whether a name could break the rules the document states in words (no invisible
    characters or text-direction controls, no word mixing Latin, Greek and Cyrillic). Errs on
    the side of yes: a name with two of the scripts anywhere counts, and so does any format
    character, emoji joiners included."""
    scripts = set()
    for character in text:
        code = ord(character)
        if unicodedata.category(character) == "Cf" or _within(code, _IGNORABLE):
            return True
        scripts.update(name for name, ranges in _SCRIPTS.items() if _within(code, ranges))
    return len(scripts) > 1


def _has_unpaired_surrogate_key(value):
    """Whether a key anywhere in `value` holds a lone surrogate (JSON's \\udXXX escape)."""
    if isinstance(value, dict):
        return any(any(0xD800 <= ord(c) <= 0xDFFF for c in str(key)) or _has_unpaired_surrogate_key(item)
                   for key, item in value.items())
    if isinstance(value, list):
        return any(_has_unpaired_surrogate_key(item) for item in value)
    return False


@schemathesis.hook
def filter_case(ctx, case):
    """Leave out the positive cases that break a rule stated in the document's words: blocking
    yourself (POST /v1/blocks/{username}), a password over 72 bytes in UTF-8, a name against the
    name rules, an unpaired surrogate in a JSON key. And the stateful steps from a registration
    to the new player's photo: schemathesis infers that registering creates it, but a player has
    none until it puts one (404 photoNotFound, as the document says), and only the fuzzing player
    can put one."""
    if _negative(case):
        return True
    operation = case.operation
    if operation.method.upper() == "GET" and operation.path == "/v1/players/{username}/photo":
        phase = getattr(getattr(case, "meta", None), "phase", None)
        if getattr(phase, "name", None) == "stateful" and (case.path_parameters or {}).get("username") != PLAYER:
            return False
    if operation.method.upper() == "POST" and operation.path == "/v1/blocks/{username}":
        if (case.path_parameters or {}).get("username") == PLAYER:
            return False
    body = case.body
    if not isinstance(body, dict):
        return True
    if _has_unpaired_surrogate_key(body):
        return False
    password = body.get("password")
    if isinstance(password, str) and len(password.encode("utf-8", "surrogatepass")) > 72:
        return False
    if operation.path == "/v1/locations/{id}/position":
        names = ("site",)
    elif operation.path in ("/v1/players", "/v1/players/me", "/v1/locations"):
        names = ("firstName", "lastName", "name")
    else:
        names = ()
    return not any(isinstance(body.get(field), str) and _breaks_name_rules(body[field]) for field in names)
