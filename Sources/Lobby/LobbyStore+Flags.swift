import Foundation
import GRDB
import LobbyDatabase
import Minigames

/// A player whose history ``ScoreScrutiny`` flagged, as the operator sees it.
public struct FlaggedPlayer: Sendable, Equatable {
    public struct Flag: Sendable, Equatable {
        public var reason: PlayerFlagReason
        public var details: String
        public var flaggedAt: Date
    }

    public var username: String
    public var flags: [Flag]
    /// Tournaments the player won whose rewards are held until it is cleared.
    public var heldTournaments: [Int64]
}

/// What clearing a player did.
public struct FlagClearance: Sendable, Equatable {
    public var username: String
    public var cleared: [PlayerFlagReason]
    /// Tournaments whose held rewards the player received.
    public var releasedTournaments: [Int64]
}

extension LobbyStore {
    /// Records a verified score in the player's history and flags the player when the history
    /// now says its recordings are made up (``ScoreScrutiny``). Inside the score's transaction.
    func recordEvidence(_ context: inout WriteContext, player: Int64, minigame: MinigameName, score: Int, unfingerprinted: String?) throws {
        let db = context.db
        try db.execute("INSERT INTO scoreEvidence (playerId, minigame, score, unfingerprinted, at) VALUES (?, ?, ?, ?, ?)",
                       player, minigame, score, unfingerprinted, context.now.unixTime)
        let scrutiny = ScoreScrutiny()
        let rows = try db.fetchAll("""
            SELECT minigame, score, unfingerprinted FROM scoreEvidence
            WHERE playerId = ? AND id > COALESCE((SELECT MAX(clearedThrough) FROM playerFlag WHERE playerId = ?), 0)
            ORDER BY id DESC LIMIT ?
            """, player, player, scrutiny.window)
        let history = try rows.reversed().map {
            ScoreScrutiny.Entry(minigame: try $0.get(0, as: MinigameName.self), score: try $0.get(1, as: Int.self),
                                unfingerprinted: try $0.get(2, as: String?.self))
        }
        for finding in scrutiny.findings(history) {
            // At most one open flag per reason (the partial unique index playerFlag_open).
            let inserted = try db.execute("""
                INSERT INTO playerFlag (playerId, reason, details, flaggedAt) VALUES (?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """, player, finding.reason.rawValue, finding.details, context.now.unixTime)
            guard inserted > 0 else { continue }
            flagCounters[finding.reason]?.increment()
            let name = try names(db, [player])[player] ?? "#\(player)"
            logger.notice("Flagged \(name) (\(finding.reason.rawValue)): \(finding.details); tournament rewards are held until an operator clears it")
        }
    }

    /// Whether the player has a flag no operator cleared yet.
    func isFlagged(_ db: any SQLSession, player: Int64) throws -> Bool {
        try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM playerFlag WHERE playerId = ? AND clearedAt IS NULL)", player) ?? false
    }

    /// Every player with a flag not yet cleared, with why and the tournament rewards held from it.
    public func flaggedPlayers() async throws -> [FlaggedPlayer] {
        try await read { db, _ in
            let rows = try db.fetchAll("""
                SELECT f.playerId, p.username, f.reason, f.details, f.flaggedAt FROM playerFlag f JOIN player p ON p.id = f.playerId
                WHERE f.clearedAt IS NULL ORDER BY f.flaggedAt, f.id
                """)
            var players: [FlaggedPlayer] = []
            var index: [Int64: Int] = [:]
            for row in rows {
                let id = try row.get(0, as: Int64.self)
                let flag = FlaggedPlayer.Flag(reason: PlayerFlagReason(rawValue: try row.get(2, as: String.self)) ?? .ceiling,
                                              details: try row.get(3, as: String.self),
                                              flaggedAt: try row.requiredDate(atIndex: 4, "flaggedAt"))
                if let at = index[id] {
                    players[at].flags.append(flag)
                } else {
                    index[id] = players.count
                    let held = try db.fetchAll(
                        "SELECT tournamentId FROM heldReward WHERE playerId = ? AND releasedAt IS NULL ORDER BY tournamentId", id
                    ).map { try $0.get(0, as: Int64.self) }
                    players.append(FlaggedPlayer(username: try row.get(1, as: String?.self) ?? "#\(id)", flags: [flag], heldTournaments: held))
                }
            }
            return players
        }
    }

    /// Clears the player's flags (an operator looked and found the scores genuine) and gives it
    /// the tournament rewards held from it: in each tournament it won, every participant's
    /// unlocked players as they are now, as the tournament's closing would have. Later scores
    /// are judged on the history after this clearance only. `notFound` when nothing is flagged.
    @discardableResult
    public func clearFlags(username: String, by operatorName: String) async throws -> FlagClearance {
        try await write { context in
            let db = context.db
            let player = try self.livePlayer(db, username: username)
            guard let id = player.id else { throw LobbyError.playerNotFound(username) }
            // Two clearances at once must not both release the held rewards (each reward once),
            // nor a new flag slip in between reading the flags and clearing them.
            try db.lock("player", ids: [id])
            let reasons = try db.fetchAll("SELECT reason FROM playerFlag WHERE playerId = ? AND clearedAt IS NULL ORDER BY id", id)
                .map { try $0.get(0, as: String.self) }.compactMap(PlayerFlagReason.init(rawValue:))
            guard !reasons.isEmpty else {
                throw LobbyError(.notFound, .notFlagged, "\(username) is not flagged: `nearplay lobby flags list` shows who is.")
            }
            let through = try db.fetchValue(Int64.self, "SELECT MAX(id) FROM scoreEvidence WHERE playerId = ?", id) ?? 0
            try db.execute("UPDATE playerFlag SET clearedAt = ?, clearedBy = ?, clearedThrough = ? WHERE playerId = ? AND clearedAt IS NULL",
                           context.now.unixTime, operatorName, through, id)
            let held = try db.fetchAll("SELECT tournamentId FROM heldReward WHERE playerId = ? AND releasedAt IS NULL ORDER BY tournamentId", id)
                .map { try $0.get(0, as: Int64.self) }
            for tournament in held {
                try self.giveTournamentReward(&context, tournament: tournament, winner: id)
                try db.execute("UPDATE heldReward SET releasedAt = ? WHERE tournamentId = ?", context.now.unixTime, tournament)
            }
            self.logger.notice("\(operatorName) cleared \(username) (\(reasons.map(\.rawValue).joined(separator: ", "))); released the rewards of \(held.count) tournaments")
            return FlagClearance(username: username, cleared: reasons, releasedTournaments: held)
        }
    }

    /// The winner takes every participant's unlocked players, as persistent ones.
    func giveTournamentReward(_ context: inout WriteContext, tournament: Int64, winner: Int64) throws {
        let participants = try context.db.fetchAll("SELECT playerId FROM tournamentEntry WHERE tournamentId = ? ORDER BY playerId", tournament)
            .map { try $0.get(0, as: Int64.self) }
        let before = try unlocks(context.db, of: participants)
        let after = RewardRule.winnerTakesUnlocks(participants: participants, winner: winner, before: before)
        try commitUnlocks(&context, owners: participants, before: before, after: after)
    }
}
