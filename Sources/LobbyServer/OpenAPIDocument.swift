/// The OpenAPI 3 description of `/v1`, served at `GET /v1/openapi.yaml`. A test checks that every
/// route of the router is described here and every path here is routed.
enum OpenAPIDocument {
    static let text = #"""
openapi: 3.0.3
info:
  title: Nearplay lobby
  version: "1"
  description: >
    Accounts, beacon identities, encounters, invitations, games, rewards, events, and
    multiplayer locations with their tournaments.
    JSON with camelCase keys; dates are ISO 8601. Every route but health, openapi.yaml,
    registration and log-in needs `Authorization: Bearer <token>`. Errors are
    `{"error": {"code": "...", "message": "..."}}` with a 4xx status for client mistakes.
    Registration and log-in are throttled per account and per client address: past the limits
    (by default 10 sign-ins per account, then one per 30 s; 30 per address, then one per 6 s;
    20 registrations per address, then one a minute) they answer 429 `tooManyAttempts` with
    `Retry-After` in seconds, before any password is checked.
servers:
  - url: http://127.0.0.1:8080
security:
  - bearer: []
paths:
  /metrics:
    get:
      summary: "Counts and times in the Prometheus text format: requests and latency by route, database time, WebSocket clients, throttled sign-ins."
      security: []
      responses:
        "200": {description: The metrics., content: {text/plain: {schema: {type: string}}}}
  /v1/health:
    get:
      summary: Liveness and database check.
      security: []
      responses:
        "200": {description: OK}
  /v1/openapi.yaml:
    get:
      summary: This document.
      security: []
      responses:
        "200": {description: The OpenAPI document.}
  /v1/players:
    post:
      summary: Register a player.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Registration"}
      responses:
        "201": {description: The new player., content: {application/json: {schema: {$ref: "#/components/schemas/Player"}}}}
        "400": {$ref: "#/components/responses/Error"}
        "409": {$ref: "#/components/responses/Error"}
        "429": {$ref: "#/components/responses/Throttled"}
  /v1/sessions:
    post:
      summary: Log in.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [username, password]
              properties: {username: {type: string}, password: {type: string}}
      responses:
        "201": {description: A session., content: {application/json: {schema: {$ref: "#/components/schemas/Session"}}}}
        "401": {$ref: "#/components/responses/Error"}
        "429": {$ref: "#/components/responses/Throttled"}
  /v1/sessions/current:
    delete:
      summary: Log out (ends the session of the token used).
      responses:
        "204": {description: Logged out.}
  /v1/players/me:
    get:
      summary: The authenticated player.
      responses:
        "200": {description: The player., content: {application/json: {schema: {$ref: "#/components/schemas/Player"}}}}
    patch:
      summary: Change names or password (username and e-mail are immutable).
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                firstName: {type: string}
                lastName: {type: string}
                password: {type: string, minLength: 10}
                timeZone: {type: string, description: "IANA zone (Europe/Oslo) your days, weeks and months are counted in; empty clears it (UTC)."}
                country: {type: string, minLength: 0, maxLength: 2, description: ISO 3166-1 alpha-2 code; empty clears it.}
      responses:
        "200": {description: The player., content: {application/json: {schema: {$ref: "#/components/schemas/Player"}}}}
        "400": {$ref: "#/components/responses/Error"}
    delete:
      summary: Delete (anonymise) the account.
      responses:
        "204": {description: Deleted.}
  /v1/players/me/photo:
    put:
      summary: Replace the photo (JPEG or PNG bytes, at most 512 KiB).
      requestBody:
        required: true
        content:
          image/jpeg: {schema: {type: string, format: binary}}
          image/png: {schema: {type: string, format: binary}}
      responses:
        "200": {description: The player., content: {application/json: {schema: {$ref: "#/components/schemas/Player"}}}}
        "400": {$ref: "#/components/responses/Error"}
        "413": {$ref: "#/components/responses/Error"}
  /v1/players/me/calibration:
    get:
      summary: The calibration stored for your device (the lobby verifies your scores with it).
      responses:
        "200": {description: The calibration., content: {application/json: {schema: {$ref: "#/components/schemas/Calibration"}}}}
        "404": {$ref: "#/components/responses/Error"}
    put:
      summary: >
        Store your device's calibration (as `nearplay calibrate sensors` measures it). Until one is
        stored, scores are verified with every game's uncalibrated defaults.
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Calibration"}
      responses:
        "200": {description: The stored calibration., content: {application/json: {schema: {$ref: "#/components/schemas/Calibration"}}}}
        "400": {$ref: "#/components/responses/Error"}
        "413": {$ref: "#/components/responses/Error"}
        "422": {description: No device at rest gives this calibration (code calibrationRefused; the message says why)., content: {application/json: {schema: {$ref: "#/components/schemas/ErrorBody"}}}}
  /v1/players/{username}/photo:
    get:
      summary: A player's photo.
      parameters: [{$ref: "#/components/parameters/username"}]
      responses:
        "200": {description: The image., content: {image/jpeg: {}, image/png: {}}}
        "404": {$ref: "#/components/responses/Error"}
  /v1/players/{username}/stats:
    get:
      summary: Statistics of a player you currently see or have unlocked.
      description: >
        The 30-day summary (the keys of Stats), totals since registration, wins, losses and draws
        per day of the last 30 days grouped in the player's own zone (results are stored in UTC),
        its rank by number of unlocked players, each minigame's record holder and the country
        most of its unlocked players come from.
      parameters: [{$ref: "#/components/parameters/username"}]
      responses:
        "200": {description: Statistics., content: {application/json: {schema: {$ref: "#/components/schemas/Statistics"}}}}
        "403": {$ref: "#/components/responses/Error"}
        "404": {$ref: "#/components/responses/Error"}
  /v1/beacons/{uuid}/{major}/{minor}:
    get:
      summary: Resolve a beacon identity to a public profile.
      parameters:
        - {name: uuid, in: path, required: true, schema: {type: string, format: uuid}}
        - {name: major, in: path, required: true, schema: {type: integer, minimum: 0, maximum: 65535}}
        - {name: minor, in: path, required: true, schema: {type: integer, minimum: 0, maximum: 65535}}
      responses:
        "200": {description: The profile., content: {application/json: {schema: {$ref: "#/components/schemas/Profile"}}}}
        "404": {$ref: "#/components/responses/Error"}
  /v1/encounters:
    post:
      summary: Report the beacon identities the agent sees, players' and locations' (at most 1000 per report).
      description: >
        With a `key`, a report repeating an earlier one of yours with the same key records nothing
        and is answered with the first receipt (keys are kept for 7 days).
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [sightings]
              properties:
                key: {type: string, minLength: 1, maxLength: 128, description: Idempotency key.}
                sightings:
                  type: array
                  items:
                    type: object
                    required: [uuid, major, minor, at]
                    properties:
                      uuid: {type: string, format: uuid}
                      major: {type: integer}
                      minor: {type: integer}
                      distance: {type: number}
                      at: {type: string, format: date-time}
                      rssi: {type: number, minimum: -130, maximum: 20, description: "Two-way ranging: the filtered RSSI (dBm) read of this beacon; with measuredPower, handed to the player seen as a peerReading event."}
                      measuredPower: {type: number, minimum: -128, maximum: 127, description: The measured power (dBm at 1 m) this beacon advertises; required with rssi.}
                      rssiVariance: {type: number, minimum: 0, description: Variance (dB²) of rssi; only with rssi.}
      responses:
        "200":
          description: What was recorded (the first receipt, for a repeated key).
          content: {application/json: {schema: {type: object, properties: {recorded: {type: integer}, ignored: {type: integer}}}}}
        "400": {$ref: "#/components/responses/Error"}
  /v1/invitations:
    post:
      summary: Invite one or several players you see or have unlocked.
      description: >
        With a `key`, a request repeating an earlier one of yours with the same key creates nothing
        and is answered (200) with that invitation as it is now (keys are kept for 7 days).
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [invitees]
              properties:
                invitees: {type: array, items: {type: string}, minItems: 1, maxItems: 20}
                key: {type: string, minLength: 1, maxLength: 128, description: Idempotency key.}
      responses:
        "201": {description: The invitation, with the players left out., content: {application/json: {schema: {$ref: "#/components/schemas/Invitation"}}}}
        "200": {description: Same key as before; the invitation., content: {application/json: {schema: {$ref: "#/components/schemas/Invitation"}}}}
        "400": {$ref: "#/components/responses/Error"}
        "409": {$ref: "#/components/responses/Error"}
    get:
      summary: Pending invitations sent or received.
      responses:
        "200": {description: Invitations., content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Invitation"}}}}}
  /v1/invitations/{id}/accept:
    post:
      summary: Accept an invitation (accepting again answers 200; accepting after declining is 409).
      parameters: [{$ref: "#/components/parameters/id"}]
      responses:
        "200": {description: The invitation., content: {application/json: {schema: {$ref: "#/components/schemas/Invitation"}}}}
        "403": {$ref: "#/components/responses/Error"}
        "409": {$ref: "#/components/responses/Error"}
  /v1/invitations/{id}/decline:
    post:
      summary: Decline an invitation (declining again answers 200; declining after accepting is 409).
      parameters: [{$ref: "#/components/parameters/id"}]
      responses:
        "200": {description: The invitation., content: {application/json: {schema: {$ref: "#/components/schemas/Invitation"}}}}
        "403": {$ref: "#/components/responses/Error"}
        "409": {$ref: "#/components/responses/Error"}
  /v1/games:
    get:
      summary: Games you take part in, newest first.
      responses:
        "200": {description: Games., content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Game"}}}}}
  /v1/games/{id}:
    get:
      summary: One of your games.
      parameters: [{$ref: "#/components/parameters/id"}]
      responses:
        "200": {description: The game., content: {application/json: {schema: {$ref: "#/components/schemas/Game"}}}}
        "403": {$ref: "#/components/responses/Error"}
        "404": {$ref: "#/components/responses/Error"}
  /v1/games/{id}/rounds/{n}/scores:
    post:
      summary: Submit your score for a round with its recording (idempotent by key).
      description: >
        The lobby verifies the score on the recording before storing it: it replaces the
        recording's calibration with the one stored for your device (none stored: the games'
        uncalibrated defaults) and its duration and signal time with the round's plan, requires its
        game to be the round's minigame, and recomputes the score, which must equal the claim.
        The body is at most 1 MiB. A repeat with the same key is answered without verifying again.
      parameters:
        - {$ref: "#/components/parameters/id"}
        - {name: n, in: path, required: true, schema: {type: integer, minimum: 1}}
      requestBody: {$ref: "#/components/requestBodies/ScoreSubmission"}
      responses:
        "201": {description: Recorded; the game., content: {application/json: {schema: {$ref: "#/components/schemas/Game"}}}}
        "200": {description: Same key as before; the game., content: {application/json: {schema: {$ref: "#/components/schemas/Game"}}}}
        "400": {$ref: "#/components/responses/Error"}
        "403": {$ref: "#/components/responses/Error"}
        "404": {$ref: "#/components/responses/Error"}
        "409": {$ref: "#/components/responses/Error"}
        "413": {$ref: "#/components/responses/Error"}
        "422": {description: The recording does not give the claimed score or is not the round's (code scoreRefused; the message says why)., content: {application/json: {schema: {$ref: "#/components/schemas/ErrorBody"}}}}
  /v1/leaderboards/{board}:
    get:
      summary: A page of a board, with your rank, the number of participants and the player just ahead of you.
      description: >
        Boards: day, week (Monday to Sunday), month, all (all time) by points earned in finished
        games (1 for taking part, 1 per round won, 3 for a win, 1 for a draw), and league (your
        league group this week). Windows are in your zone (PATCH /v1/players/me timeZone; UTC
        when unset); each player's points count in the window of its own zone when earned.
        location:ID ranks the tournament scores earned at a location, tournament:ID the totals of a
        tournament's entries that played a round.
        Players without points in the window are not on the board. Ranks are standard
        competition ranks (1, 2, 2, 4).
      parameters:
        - {name: board, in: path, required: true, description: "day, week, month, all, league, location:ID or tournament:ID.", schema: {type: string, pattern: "^(day|week|month|all|league|location:[1-9][0-9]*|tournament:[1-9][0-9]*)$"}}
        - {name: date, in: query, description: "A date (YYYY-MM-DD, your zone) in the window to show; today by default.", schema: {type: string, format: date}}
        - {name: offset, in: query, schema: {type: integer, minimum: 0, default: 0}}
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 100, default: 20}}
      responses:
        "200": {description: The page., content: {application/json: {schema: {$ref: "#/components/schemas/Leaderboard"}}}}
        "400": {$ref: "#/components/responses/Error"}
        "404": {$ref: "#/components/responses/Error"}
  /v1/achievements:
    get:
      summary: Every achievement with your progress and the tiers granted.
      responses:
        "200": {description: Achievements., content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Achievement"}}}}}
  /v1/unlocked:
    get:
      summary: Players you have unlocked.
      responses:
        "200":
          description: Unlocked players.
          content: {application/json: {schema: {type: array, items: {type: object, properties: {username: {type: string}, persistent: {type: boolean}}}}}}
  /v1/blocks/{username}:
    post:
      summary: Block a player.
      parameters: [{$ref: "#/components/parameters/username"}]
      responses:
        "204": {description: Blocked.}
    delete:
      summary: Unblock a player.
      parameters: [{$ref: "#/components/parameters/username"}]
      responses:
        "204": {description: Unblocked.}
  /v1/events:
    get:
      summary: Your events after a cursor.
      parameters:
        - {name: after, in: query, schema: {type: integer, minimum: 0}}
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 1000}}
      responses:
        "200":
          description: A page of events and the next cursor.
          content:
            application/json:
              schema: {type: object, properties: {events: {type: array, items: {$ref: "#/components/schemas/Event"}}, next: {type: integer}}}
  /v1/events/live:
    get:
      summary: WebSocket upgrade; pushes each event (JSON text frame) after `?after=`, backlog first.
      parameters:
        - {name: after, in: query, schema: {type: integer, minimum: 0}}
      responses:
        "101": {description: Switching to WebSocket.}
  /v1/locations:
    post:
      summary: Register a multiplayer location (or re-use the one you registered under this name).
      description: >
        A location advertises the deployment's UUID with major 0 (never a player's) and its id as
        the minor. Its daily, weekly and monthly tournaments start at once, in windows of its time
        zone (a day, a week from Monday, a month; UTC unless `timeZone` names an IANA zone).
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string, minLength: 1, maxLength: 64}
                timeZone: {type: string, description: "IANA time zone, e.g. Europe/Oslo; default UTC."}
      responses:
        "201": {description: Registered., content: {application/json: {schema: {$ref: "#/components/schemas/Location"}}}}
        "200": {description: Your location of that name, re-used., content: {application/json: {schema: {$ref: "#/components/schemas/Location"}}}}
        "400": {$ref: "#/components/responses/Error"}
        "409": {$ref: "#/components/responses/Error"}
  /v1/locations/{id}:
    get:
      summary: A location and its running tournaments.
      parameters: [{$ref: "#/components/parameters/id"}]
      responses:
        "200": {description: The location., content: {application/json: {schema: {$ref: "#/components/schemas/Location"}}}}
        "404": {$ref: "#/components/responses/Error"}
  /v1/locations/{id}/tournaments:
    get:
      summary: A location's tournaments, running ones first, then the latest closed (at most 50).
      parameters: [{$ref: "#/components/parameters/id"}]
      responses:
        "200": {description: Tournaments., content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Tournament"}}}}}
        "404": {$ref: "#/components/responses/Error"}
  /v1/tournaments/{id}:
    get:
      summary: A tournament with its standings (ties share a rank; the winner is whoever reached the best total first).
      parameters: [{$ref: "#/components/parameters/id"}]
      responses:
        "200": {description: The tournament., content: {application/json: {schema: {$ref: "#/components/schemas/Tournament"}}}}
        "404": {$ref: "#/components/responses/Error"}
  /v1/tournaments/{id}/entries:
    post:
      summary: Join a running tournament (joining again answers 200 with your entry).
      description: >
        You must be at its location: your agent must have reported the location's beacon (POST
        /v1/encounters) within the encounter window (10 minutes by default), else 403
        notNearLocation. The entry's rounds are the tournament's minigames, with a plan drawn for
        you; play them and submit each score. At the window's end the best total wins, and the
        winner gains every participant's unlocked players, for good.
      parameters: [{$ref: "#/components/parameters/id"}]
      responses:
        "201": {description: Your entry., content: {application/json: {schema: {$ref: "#/components/schemas/TournamentEntry"}}}}
        "200": {description: Already joined; your entry., content: {application/json: {schema: {$ref: "#/components/schemas/TournamentEntry"}}}}
        "403": {$ref: "#/components/responses/Error"}
        "404": {$ref: "#/components/responses/Error"}
        "409": {$ref: "#/components/responses/Error"}
  /v1/tournaments/{id}/entries/me:
    get:
      summary: Your entry in a tournament.
      parameters: [{$ref: "#/components/parameters/id"}]
      responses:
        "200": {description: Your entry., content: {application/json: {schema: {$ref: "#/components/schemas/TournamentEntry"}}}}
        "404": {$ref: "#/components/responses/Error"}
  /v1/tournaments/{id}/entries/me/rounds/{n}/scores:
    post:
      summary: Submit your score for a round of your entry, with its recording (idempotent by key).
      description: >
        Verified exactly as a game's round is (see POST /v1/games/{id}/rounds/{n}/scores): your
        stored calibration, the entry's plan, the round's minigame. Taken only while the tournament runs.
      parameters:
        - {$ref: "#/components/parameters/id"}
        - {name: n, in: path, required: true, schema: {type: integer, minimum: 1}}
      requestBody: {$ref: "#/components/requestBodies/ScoreSubmission"}
      responses:
        "201": {description: Recorded; your entry., content: {application/json: {schema: {$ref: "#/components/schemas/TournamentEntry"}}}}
        "200": {description: Same key as before; your entry., content: {application/json: {schema: {$ref: "#/components/schemas/TournamentEntry"}}}}
        "400": {$ref: "#/components/responses/Error"}
        "403": {$ref: "#/components/responses/Error"}
        "404": {$ref: "#/components/responses/Error"}
        "409": {$ref: "#/components/responses/Error"}
        "413": {$ref: "#/components/responses/Error"}
        "422": {description: The recording does not give the claimed score or is not the round's (code scoreRefused)., content: {application/json: {schema: {$ref: "#/components/schemas/ErrorBody"}}}}
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
  parameters:
    username: {name: username, in: path, required: true, schema: {type: string}}
    id: {name: id, in: path, required: true, schema: {type: integer, format: int64}}
  requestBodies:
    ScoreSubmission:
      description: A round's claimed score, an idempotency key, and the recording the lobby verifies it on.
      required: true
      content:
        application/json:
          schema:
            type: object
            required: [score, key, recording]
            properties:
              score: {type: integer, minimum: 0, maximum: 1000}
              key: {type: string, minLength: 1, maxLength: 128}
              recording: {$ref: "#/components/schemas/RoundRecording"}
  responses:
    Error:
      description: An error.
      content:
        application/json:
          schema: {$ref: "#/components/schemas/ErrorBody"}
    Throttled:
      description: Too many sign-in or registration attempts for this account or from this address.
      headers:
        Retry-After:
          description: Seconds to wait before trying again.
          schema: {type: integer, minimum: 1}
      content:
        application/json:
          schema: {$ref: "#/components/schemas/ErrorBody"}
  schemas:
    ErrorBody:
      type: object
      properties:
        error:
          type: object
          required: [code, message]
          properties:
            code: {type: string}
            message: {type: string}
            excluded: {type: array, items: {$ref: "#/components/schemas/Excluded"}}
    Registration:
      type: object
      required: [username, firstName, lastName, email, password]
      properties:
        username: {type: string, minLength: 3, maxLength: 32, pattern: "^[A-Za-z0-9_.-]+$"}
        firstName: {type: string}
        lastName: {type: string}
        email: {type: string, format: email}
        password: {type: string, minLength: 10}
    Beacon:
      type: object
      properties: {uuid: {type: string, format: uuid}, major: {type: integer}, minor: {type: integer}}
    Player:
      type: object
      properties:
        username: {type: string}
        firstName: {type: string}
        lastName: {type: string}
        email: {type: string}
        beacon: {$ref: "#/components/schemas/Beacon"}
        photoURL: {type: string}
        createdAt: {type: string, format: date-time}
        timeZone: {type: string}
        country: {type: string}
    Session:
      type: object
      properties: {token: {type: string}, expiresAt: {type: string, format: date-time}}
    Stats:
      type: object
      properties:
        spanDays: {type: number}
        gamesPlayed: {type: integer}
        gamesWon: {type: integer}
        gamesLost: {type: integer}
        gamesDrawn: {type: integer}
        roundsWon: {type: integer}
        bestScore: {type: integer}
    Statistics:
      allOf:
        - {$ref: "#/components/schemas/Stats"}
        - type: object
          properties:
            username: {type: string}
            timeZone: {type: string, description: The zone its days are counted in.}
            registeredAt: {type: string, format: date-time}
            totals:
              type: object
              properties: {games: {type: integer}, wins: {type: integer}, losses: {type: integer}, draws: {type: integer}, roundsWon: {type: integer}, points: {type: integer}}
            days:
              type: array
              description: The last 30 local days, oldest first.
              items: {type: object, properties: {day: {type: string, format: date}, wins: {type: integer}, losses: {type: integer}, draws: {type: integer}}}
            unlocked:
              type: object
              properties: {count: {type: integer}, rank: {type: integer}, rankedPlayers: {type: integer}}
            records:
              type: array
              items: {type: object, properties: {minigame: {$ref: "#/components/schemas/Minigame"}, score: {type: integer}, holder: {type: string}, at: {type: string, format: date-time}}}
            topOpponentCountry: {type: string}
    LeaderboardEntry:
      type: object
      properties:
        rank: {type: integer}
        username: {type: string}
        points: {type: integer}
        movement: {type: string, enum: [up, down], description: League boards only.}
    Leaderboard:
      type: object
      properties:
        board: {type: string}
        window:
          type: object
          properties: {start: {type: string, format: date}, end: {type: string, format: date}, timeZone: {type: string}}
        league:
          type: object
          properties: {tier: {type: integer}, name: {type: string}, group: {type: integer}, promoted: {type: integer}, demoted: {type: integer}}
        participants: {type: integer}
        offset: {type: integer}
        limit: {type: integer}
        entries: {type: array, items: {$ref: "#/components/schemas/LeaderboardEntry"}}
        me: {$ref: "#/components/schemas/LeaderboardEntry"}
        ahead: {$ref: "#/components/schemas/LeaderboardEntry"}
    AchievementGrant:
      type: object
      properties:
        achievement: {type: string}
        tier: {type: integer}
        title: {type: string}
        threshold: {type: integer}
        grantedAt: {type: string, format: date-time}
    Achievement:
      type: object
      properties:
        achievement: {type: string, description: "firstWin, games, wins.<minigame>, busyDay, podium, tournamentWin or collector."}
        title: {type: string}
        measure: {type: string}
        value: {type: integer}
        tiers:
          type: array
          items: {type: object, properties: {tier: {type: integer}, title: {type: string}, threshold: {type: integer}, grantedAt: {type: string, format: date-time}}}
    Profile:
      type: object
      properties:
        username: {type: string}
        firstName: {type: string}
        lastName: {type: string}
        photoURL: {type: string}
        stats: {$ref: "#/components/schemas/Stats"}
    Excluded:
      type: object
      properties:
        username: {type: string}
        reason: {type: string, enum: [unknownPlayer, yourself, blocked, notNearby, openGameExists, invitationLimitReached, declinedRecently]}
    Invitation:
      type: object
      properties:
        id: {type: integer, description: Also the id of the game it proposes.}
        inviter: {type: string}
        invitees:
          type: array
          items: {type: object, properties: {username: {type: string}, response: {type: string, enum: [pending, accepted, declined, expired]}}}
        excluded: {type: array, items: {$ref: "#/components/schemas/Excluded"}}
        state: {type: string, enum: [pending, open, finished, cancelled]}
        createdAt: {type: string, format: date-time}
        expiresAt: {type: string, format: date-time}
    Game:
      type: object
      properties:
        id: {type: integer}
        state: {type: string, enum: [pending, open, finished, cancelled]}
        inviter: {type: string}
        participants: {type: array, items: {type: string}}
        rounds:
          type: array
          items:
            type: object
            properties:
              n: {type: integer}
              game: {$ref: "#/components/schemas/Minigame"}
              duration: {type: number, description: Seconds the round lasts.}
              signalTime: {type: number, description: "Quickdraw only: seconds from the start of the round to the signal, drawn by the lobby."}
              scores: {type: object, additionalProperties: {type: integer}}
              winner: {type: string}
        winner: {type: string}
        createdAt: {type: string, format: date-time}
        finishedAt: {type: string, format: date-time}
        achievements:
          type: array
          description: Score submissions only; the achievements it granted you (a repeat with the same key answers the same ones).
          items: {$ref: "#/components/schemas/AchievementGrant"}
    Event:
      type: object
      properties:
        cursor: {type: integer}
        at: {type: string, format: date-time}
        kind: {type: string, enum: [invitationReceived, invitationAnswered, invitationExpired, gameStarted, gameCancelled, roundFinished, gameFinished, unlocked, unlockLost, tournamentFinished, achievementUnlocked, peerReading]}
        data:
          type: object
          description: >
            invitationReceived: game, player (the inviter). invitationAnswered: game, player (the
            invitee), response. invitationExpired: game. gameStarted: game, participants, rounds.
            gameCancelled: game. roundFinished: game, round, scores, winner (absent on a tie).
            gameFinished: game, winner (absent on a draw). unlocked: player, persistent. unlockLost: player.
            tournamentFinished: tournament, winner (absent when no entry played a round).
            achievementUnlocked: achievement, tier, title.
            peerReading: player (who read you), rssi, measuredPower, rssiVariance (when sent).
          properties:
            game: {type: integer}
            player: {type: string}
            response: {type: string, enum: [pending, accepted, declined, expired]}
            round: {type: integer}
            scores: {type: object, additionalProperties: {type: integer}}
            winner: {type: string}
            persistent: {type: boolean}
            tournament: {type: integer}
            achievement: {type: string}
            tier: {type: integer}
            title: {type: string}
            rssi: {type: number}
            measuredPower: {type: number}
            rssiVariance: {type: number}
            participants: {type: array, items: {type: string}}
            rounds:
              type: array
              items:
                type: object
                properties:
                  n: {type: integer}
                  game: {$ref: "#/components/schemas/Minigame"}
                  duration: {type: number}
                  signalTime: {type: number}
    Minigame: {type: string, enum: [screamer, shaker, statue, quickdraw]}
    Location:
      type: object
      properties:
        id: {type: integer}
        name: {type: string}
        owner: {type: string}
        beacon: {$ref: "#/components/schemas/Beacon"}
        timeZone: {type: string}
        createdAt: {type: string, format: date-time}
        tournaments: {type: array, items: {$ref: "#/components/schemas/Tournament"}}
    Tournament:
      type: object
      properties:
        id: {type: integer}
        location: {type: integer}
        period: {type: string, enum: [daily, weekly, monthly]}
        state: {type: string, enum: [open, closed]}
        startsAt: {type: string, format: date-time}
        endsAt: {type: string, format: date-time}
        minigames: {type: array, items: {$ref: "#/components/schemas/Minigame"}}
        entries: {type: integer}
        winner: {type: string}
        standings:
          type: array
          description: Only when one tournament is asked for; best first.
          items:
            type: object
            properties: {rank: {type: integer}, player: {type: string}, total: {type: integer}, roundsPlayed: {type: integer}}
    TournamentEntry:
      type: object
      properties:
        tournament: {type: integer}
        player: {type: string}
        joinedAt: {type: string, format: date-time}
        endsAt: {type: string, format: date-time}
        total: {type: integer}
        rounds:
          type: array
          items:
            type: object
            properties:
              n: {type: integer}
              game: {$ref: "#/components/schemas/Minigame"}
              duration: {type: number}
              signalTime: {type: number}
              score: {type: integer}
    Calibration:
      type: object
      description: A device's calibration, as Sensors' SensorCalibration encodes it.
      properties:
        microphone:
          type: object
          required: [pcm, noise_floor_dbfs]
          properties: {pcm: {type: string}, noise_floor_dbfs: {type: number, minimum: -90, maximum: -20}}
        accelerometer:
          type: object
          required: [device, rest_ms2, gravity_ms2, gravity_offset_ms2, noise_ms2]
          properties:
            device: {type: string}
            rest_ms2: {type: array, items: {type: number}}
            gravity_ms2: {type: number, description: 0.9–1.1 g.}
            gravity_offset_ms2: {type: number}
            noise_ms2: {type: number, minimum: 0, maximum: 0.1}
    RoundRecording:
      type: object
      description: What a round recorded, as Minigames' RoundRecording encodes it; times are seconds from the start of the round.
      required: [game, duration, levels, accelerations, calibration]
      properties:
        game: {$ref: "#/components/schemas/Minigame"}
        duration: {type: number}
        signal_time: {type: number}
        levels:
          type: array
          items:
            type: object
            required: [t, rms_dbfs, peak_dbfs, overruns]
            properties: {t: {type: number}, rms_dbfs: {type: number}, peak_dbfs: {type: number}, overruns: {type: integer}}
        accelerations:
          type: array
          items:
            type: object
            required: [t, x, y, z]
            properties: {t: {type: number}, x: {type: number}, y: {type: number}, z: {type: number}}
        calibration: {$ref: "#/components/schemas/Calibration"}
"""#
}
