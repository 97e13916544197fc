"""schemathesis hooks for APIConformanceTests: let the fuzzer reach games and tournaments.

Random ids almost never name a game, an invitation, a location or a tournament the fuzzing
player may see, so those operations would only ever answer 404. The test prepares a world
(NEARPLAY_CONFORMANCE_STATE, a JSON file): an open game of the player's with the opponent's
scores in, a pending invitation to the player, a location the player stands at and its
tournaments, and for each round a submission whose recording really gives its score. These
hooks put those ids into about three cases in four (chosen from the drawn value, so Hypothesis
can replay a case) and, for scores, the honest submission into three in four of the cases that
name a real round. Cases made to be refused (negative data) stay as drawn.
"""
import itertools
import json
import os

import schemathesis

with open(os.environ["NEARPLAY_CONFORMANCE_STATE"]) as f:
    STATE = json.load(f)


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
