import Foundation
import GRDB  // for the GRDB callers' overloads at the bottom only
import LobbyDatabase
import Minigames

extension LobbyStore {
    /// Highest score accepted for one round.
    public static let maximumScore = 1_000_000_000

    /// The games the player takes part in, newest first (at most 100).
    public func games(_ playerId: Int64) async throws -> [LobbyGame] {
        try await read { db, _ in
            let ids = try db.fetchAll("""
                SELECT gameId FROM membership WHERE playerId = ? AND response = \(InvitationResponse.accepted.sqlLiteral) ORDER BY gameId DESC LIMIT 100
                """, playerId).map { try $0.get(0, as: Int64.self) }
            return try ids.map { try self.gameView(db, gameId: $0) }
        }
    }

    /// One game, for its members (invitees included) only; to anyone else it does not exist.
    public func game(_ playerId: Int64, id: Int64) async throws -> LobbyGame {
        try await read { db, _ in
            guard try Query.game(db, id: id) != nil, try Query.membership(db, game: id, player: playerId) != nil else {
                throw LobbyError.gameNotFound(id)
            }
            return try self.gameView(db, gameId: id)
        }
    }

    /// Locks the accepted players of these games (in id order), then the games (in id order), until
    /// the transaction ends: what a rule deciding about a game (its scores, its end, its rewards)
    /// takes first on PostgreSQL, so that two such transactions run one after the other and the
    /// second sees what the first committed. Players before games, as every write body locks.
    /// Nothing on SQLite, whose one writer holds everything.
    func lockGames(_ db: any SQLSession, _ gameIds: [Int64]) throws {
        guard db.dialect == .postgres, !gameIds.isEmpty else { return }
        let ids = Array(Set(gameIds)).sorted()
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        let players = try db.fetchAll("""
            SELECT DISTINCT playerId FROM membership WHERE gameId IN (\(marks)) AND response = \(InvitationResponse.accepted.sqlLiteral)
            """, ids.map(\.sqlValue)).map { try $0.get(0, as: Int64.self) }
        try db.lock("player", ids: players)
        try db.lock("game", ids: ids)
    }

    /// Announces round `n` if every participant has now scored in it, and evaluates the game when
    /// every round is complete. The caller holds the game's locks (``lockGames(_:_:)``).
    func closeRoundsAndGame(_ context: inout WriteContext, gameId: Int64, scoredRounds: Set<Int>) throws {
        let db = context.db
        guard let game = try Query.game(db, id: gameId), game.state == .open else { return }
        let participants = try db.fetchAll("""
            SELECT playerId FROM membership WHERE gameId = ? AND response = \(InvitationResponse.accepted.sqlLiteral) ORDER BY playerId
            """, gameId).map { try $0.get(0, as: Int64.self) }
        let rounds = try Query.rounds(db, game: gameId)
        let scores = try Query.scores(db, game: gameId)
        let names = try names(db, participants)
        var roundScores: [[Int64: Int]] = []
        for round in rounds {
            let these = Dictionary(scores.filter { $0.n == round.n }.map { ($0.playerId, $0.score) }, uniquingKeysWith: max)
            roundScores.append(these)
        }
        // Announce the rounds this transaction completed.
        for (round, these) in zip(rounds, roundScores) where these.count == participants.count && scoredRounds.contains(round.n) {
            let winner = GameEvaluation.roundWinner(these).flatMap { names[$0] }
            let named = Dictionary(these.map { (names[$0.key] ?? "", $0.value) }, uniquingKeysWith: max)
            for player in participants {
                try context.record(.roundFinished, for: player, EventData(game: gameId, round: round.n, scores: named, winner: winner))
            }
        }
        guard roundScores.allSatisfy({ $0.count == participants.count }) else { return }
        let winner = GameEvaluation.winner(rounds: roundScores)
        // Only the transaction that moves the game on from open finishes and rewards it: the
        // locks make that the only one, and the condition keeps it so regardless.
        let finished = try db.execute("UPDATE game SET state = \(GameState.finished.sqlLiteral), finishedAt = ?, winnerId = ? WHERE id = ? AND state = \(GameState.open.sqlLiteral)",
                                      context.now.unixTime, winner, gameId)
        guard finished == 1 else { return }
        for player in participants {
            try context.record(.gameFinished, for: player, EventData(game: gameId, winner: winner.flatMap { names[$0] }))
        }
        try applyRewards(&context, participants: participants, winner: winner)
        try recordResults(&context, gameId: gameId, participants: participants, rounds: rounds, roundScores: roundScores,
                          winner: winner, round: scoredRounds.count == 1 ? scoredRounds.first : nil)
    }

    /// Applies ``RewardRule`` to the stored unlocks and tells each owner what it gained or lost.
    func applyRewards(_ context: inout WriteContext, participants: [Int64], winner: Int64?) throws {
        let before = try unlocks(context.db, of: participants)
        let after = RewardRule.apply(participants: participants, winner: winner, before: before)
        try commitUnlocks(&context, owners: participants, before: before, after: after)
    }

    /// The stored unlocks of `owners`.
    func unlocks(_ db: any SQLSession, of owners: [Int64]) throws -> RewardRule.Unlocks<Int64> {
        var unlocks: RewardRule.Unlocks<Int64> = [:]
        for owner in owners {
            let rows = try Query.unlocks(db, owner: owner)
            unlocks[owner] = Dictionary(rows.map { ($0.unlockedId, $0.persistent) }, uniquingKeysWith: { $0 || $1 })
        }
        return unlocks
    }

    /// Stores the owners' unlocks as `after` has them (deleted players neither gain nor are
    /// gained) and tells each owner what it gained or lost.
    func commitUnlocks(
        _ context: inout WriteContext, owners: [Int64], before: RewardRule.Unlocks<Int64>, after: RewardRule.Unlocks<Int64>
    ) throws {
        let db = context.db
        let deleted = Set(try owners.filter { try Query.player(db, id: $0)?.deletedAt != nil })
        for owner in owners where !deleted.contains(owner) {
            let old = before[owner] ?? [:]
            let new = (after[owner] ?? [:]).filter { !deleted.contains($0.key) && $0.key != owner }
            let names = try names(db, Array(Set(old.keys).union(new.keys)))
            for (player, _) in old where new[player] == nil {
                try db.execute("DELETE FROM unlock WHERE ownerId = ? AND unlockedId = ?", owner, player)
                try context.record(.unlockLost, for: owner, EventData(player: names[player]))
            }
            for (player, persistent) in new where old[player] != persistent {
                try db.execute("""
                    INSERT INTO unlock (ownerId, unlockedId, persistent, since) VALUES (?, ?, ?, ?)
                    ON CONFLICT (ownerId, unlockedId) DO UPDATE SET persistent = excluded.persistent, since = excluded.since
                    """, owner, player, persistent, context.now.unixTime)
                try context.record(.unlocked, for: owner, EventData(player: names[player], persistent: persistent))
            }
        }
    }

    /// Takes a deleted player out of everything still running: its pending answers become
    /// declines, the invitations it sent are cancelled, and its missing scores in open games become
    /// forfeits (0), so that those games can still end.
    func withdraw(_ context: inout WriteContext, playerId: Int64) throws {
        let db = context.db
        let running = """
            SELECT m.gameId, m.role, g.state FROM membership m JOIN game g ON g.id = m.gameId
            WHERE m.playerId = ? AND g.state IN \([GameState.pending, GameState.open].sqlList) AND m.response IN \([InvitationResponse.pending, InvitationResponse.accepted].sqlList)
            ORDER BY m.gameId
            """
        if db.dialect == .postgres {
            // Others may be answering, scoring in or expiring these games meanwhile: lock their
            // players, then the games, before deciding anything, and read them again once locked.
            try lockGames(db, try db.fetchAll(running, playerId).map { try $0.get(0, as: Int64.self) })
        }
        let memberships = try db.fetchAll(running, playerId)
        for row in memberships {
            let gameId = try row.get(0, as: Int64.self)
            let role = try row.get(1, as: String.self)
            let state = try row.get(2, as: String.self)
            if state == GameState.pending.rawValue {
                if role == MembershipRecord.Role.inviter.rawValue {
                    try db.execute("UPDATE game SET state = \(GameState.cancelled.sqlLiteral), finishedAt = ? WHERE id = ?", context.now.unixTime, gameId)
                    try db.execute("""
                        UPDATE membership SET response = \(InvitationResponse.expired.sqlLiteral), respondedAt = ? WHERE gameId = ? AND response = \(InvitationResponse.pending.sqlLiteral)
                        """, context.now.unixTime, gameId)
                    let others = try db.fetchAll("SELECT playerId FROM membership WHERE gameId = ? AND playerId <> ? ORDER BY playerId",
                                                 gameId, playerId).map { try $0.get(0, as: Int64.self) }
                    for other in others { try context.record(.gameCancelled, for: other, EventData(game: gameId)) }
                } else {
                    try db.execute("""
                        UPDATE membership SET response = \(InvitationResponse.declined.sqlLiteral), respondedAt = ? WHERE gameId = ? AND playerId = ?
                        """, context.now.unixTime, gameId, playerId)
                    try settle(&context, gameId: gameId)
                }
            } else {
                let missing = Set(try db.fetchAll("""
                    SELECT n FROM round WHERE gameId = ? AND n NOT IN (SELECT n FROM score WHERE gameId = ? AND playerId = ?)
                    """, gameId, gameId, playerId).map { try $0.get(0, as: Int.self) })
                try db.execute("""
                    INSERT INTO score (gameId, n, playerId, score, key, submittedAt)
                    SELECT gameId, n, ?, 0, 'forfeit', ? FROM round WHERE gameId = ?
                    ON CONFLICT DO NOTHING
                    """, playerId, context.now.unixTime, gameId)
                try closeRoundsAndGame(&context, gameId: gameId, scoredRounds: missing)
            }
        }
    }

    /// Draws a new game's rounds (``drawMinigames()``) and stores the plan each is played on,
    /// which the lobby keeps so the client cannot choose it. Quickdraw's signal goes to
    /// `signalDelay`, not to the plan's `signalTime`: it is revealed only when the round starts
    /// (``revealSignal(_:game:round:)``).
    func drawRounds(_ db: any SQLSession, gameId: Int64) throws {
        for (index, drawn) in try drawMinigames().enumerated() {
            try RoundRecord(gameId: gameId, n: index + 1, minigame: drawn.minigame.name, duration: drawn.plan.duration,
                            signalTime: nil, signalDelay: drawn.plan.signalTime).insert(db)
        }
    }

    /// ``LobbyConfiguration/roundsPerGame`` minigames from the enabled ones (no game twice until
    /// each enabled one has had its turn), each with a plan (its duration and, for Quickdraw, the
    /// signal time).
    func drawMinigames() throws -> [(minigame: any Minigame, plan: RoundPlan)] {
        var system = SystemRandomNumberGenerator()
        var deck: [MinigameName] = []
        var drawn: [(minigame: any Minigame, plan: RoundPlan)] = []
        for _ in 1...max(1, configuration.roundsPerGame) {
            if deck.isEmpty { deck = configuration.enabledMinigames.shuffled(using: &system) }
            guard let name = deck.popLast(),
                  let minigame = MinigameCatalog.game(named: name)
            else {
                throw LobbyError(.conflict, .noMinigames, "The lobby has no minigame enabled; its configuration is broken.")
            }
            var generator: any RandomNumberGenerator = system
            drawn.append((minigame, minigame.plan(using: &generator)))
        }
        return drawn
    }

    func gameView(_ db: any SQLSession, gameId: Int64) throws -> LobbyGame {
        guard let game = try Query.game(db, id: gameId) else { throw LobbyError.gameNotFound(gameId) }
        let participants = try db.fetchAll("""
            SELECT playerId FROM membership WHERE gameId = ? AND response = \(InvitationResponse.accepted.sqlLiteral) ORDER BY role = \(MembershipRecord.Role.invitee.sqlLiteral), playerId
            """, gameId).map { try $0.get(0, as: Int64.self) }
        let names = try names(db, participants + [game.inviterId])
        let scores = try Query.scores(db, game: gameId)
        let rounds = try Query.rounds(db, game: gameId).map { round in
            let these = Dictionary(scores.filter { $0.n == round.n }.map { ($0.playerId, $0.score) }, uniquingKeysWith: max)
            let complete = these.count == participants.count && game.state != .pending
            return LobbyGame.Round(
                n: round.n, game: round.minigame, duration: round.duration, signalTime: round.signalTime,
                scores: Dictionary(these.map { (names[$0.key] ?? "", $0.value) }, uniquingKeysWith: max),
                winner: complete ? GameEvaluation.roundWinner(these).flatMap { names[$0] } : nil)
        }
        return LobbyGame(
            id: gameId, state: game.state, inviter: names[game.inviterId] ?? "", participants: participants.map { names[$0] ?? "" },
            rounds: rounds, winner: game.winnerId.flatMap { names[$0] }, createdAt: game.createdAt, finishedAt: game.finishedAt)
    }
}
