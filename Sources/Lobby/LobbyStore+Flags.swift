import Foundation
import GRDB
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
    func recordEvidence(_ context: inout WriteContext, player: Int64, minigame: String, score: Int, unfingerprinted: String?) throws {
        let db = context.db.grdb
        try db.cached("INSERT INTO scoreEvidence (playerId, minigame, score, unfingerprinted, at) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [player, minigame, score, unfingerprinted, context.now.unixTime])
        let scrutiny = ScoreScrutiny()
        let rows = try Row.fetchAll(db.cached("""
            SELECT minigame, score, unfingerprinted FROM scoreEvidence
            WHERE playerId = ? AND id > COALESCE((SELECT MAX(clearedThrough) FROM playerFlag WHERE playerId = ?), 0)
            ORDER BY id DESC LIMIT ?
            """), arguments: [player, player, scrutiny.window])
        let history = rows.reversed().map { ScoreScrutiny.Entry(minigame: $0["minigame"], score: $0["score"], unfingerprinted: $0["unfingerprinted"]) }
        for finding in scrutiny.findings(history) {
            try db.cached("INSERT OR IGNORE INTO playerFlag (playerId, reason, details, flaggedAt) VALUES (?, ?, ?, ?)")
                .execute(arguments: [player, finding.reason.rawValue, finding.details, context.now.unixTime])
            guard db.changesCount > 0 else { continue }
            flagCounters[finding.reason]?.increment()
            let name = try names(db, [player])[player] ?? "#\(player)"
            logger.notice("Flagged \(name) (\(finding.reason.rawValue)): \(finding.details); tournament rewards are held until an operator clears it")
        }
    }

    /// Whether the player has a flag no operator cleared yet.
    func isFlagged(_ db: Database, player: Int64) throws -> Bool {
        try Bool.fetchOne(db.cached("SELECT EXISTS (SELECT 1 FROM playerFlag WHERE playerId = ? AND clearedAt IS NULL)"),
                          arguments: [player]) ?? false
    }

    /// Every player with a flag not yet cleared, with why and the tournament rewards held from it.
    public func flaggedPlayers() async throws -> [FlaggedPlayer] {
        try await readGRDB { db, _ in
            let rows = try Row.fetchAll(db, sql: """
                SELECT f.playerId, p.username, f.reason, f.details, f.flaggedAt FROM playerFlag f JOIN player p ON p.id = f.playerId
                WHERE f.clearedAt IS NULL ORDER BY f.flaggedAt, f.id
                """)
            var players: [FlaggedPlayer] = []
            var index: [Int64: Int] = [:]
            for row in rows {
                let id: Int64 = row["playerId"]
                let flag = FlaggedPlayer.Flag(reason: PlayerFlagReason(rawValue: row["reason"]) ?? .ceiling, details: row["details"],
                                              flaggedAt: try row.requiredDate(atIndex: 4, "flaggedAt"))
                if let at = index[id] {
                    players[at].flags.append(flag)
                } else {
                    index[id] = players.count
                    let held = try Int64.fetchAll(db.cached(
                        "SELECT tournamentId FROM heldReward WHERE playerId = ? AND releasedAt IS NULL ORDER BY tournamentId"), arguments: [id])
                    players.append(FlaggedPlayer(username: row["username"] ?? "#\(id)", flags: [flag], heldTournaments: held))
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
            let db = context.db.grdb
            let player = try self.livePlayer(db, username: username)
            guard let id = player.id else { throw LobbyError.playerNotFound(username) }
            let reasons = try String.fetchAll(db.cached("SELECT reason FROM playerFlag WHERE playerId = ? AND clearedAt IS NULL ORDER BY id"),
                                              arguments: [id]).compactMap(PlayerFlagReason.init(rawValue:))
            guard !reasons.isEmpty else {
                throw LobbyError(.notFound, "notFlagged", "\(username) is not flagged: `nearplay lobby flags list` shows who is.")
            }
            let through = try Int64.fetchOne(db.cached("SELECT MAX(id) FROM scoreEvidence WHERE playerId = ?"), arguments: [id]) ?? 0
            try db.cached("UPDATE playerFlag SET clearedAt = ?, clearedBy = ?, clearedThrough = ? WHERE playerId = ? AND clearedAt IS NULL")
                .execute(arguments: [context.now.unixTime, operatorName, through, id])
            let held = try Int64.fetchAll(db.cached("SELECT tournamentId FROM heldReward WHERE playerId = ? AND releasedAt IS NULL ORDER BY tournamentId"),
                                          arguments: [id])
            for tournament in held {
                try self.giveTournamentReward(&context, tournament: tournament, winner: id)
                try db.cached("UPDATE heldReward SET releasedAt = ? WHERE tournamentId = ?").execute(arguments: [context.now.unixTime, tournament])
            }
            self.logger.notice("\(operatorName) cleared \(username) (\(reasons.map(\.rawValue).joined(separator: ", "))); released the rewards of \(held.count) tournaments")
            return FlagClearance(username: username, cleared: reasons, releasedTournaments: held)
        }
    }

    /// The winner takes every participant's unlocked players, as persistent ones.
    func giveTournamentReward(_ context: inout WriteContext, tournament: Int64, winner: Int64) throws {
        let participants = try Int64.fetchAll(context.db.grdb.cached("SELECT playerId FROM tournamentEntry WHERE tournamentId = ? ORDER BY playerId"),
                                              arguments: [tournament])
        let before = try unlocks(context.db.grdb, of: participants)
        let after = RewardRule.winnerTakesUnlocks(participants: participants, winner: winner, before: before)
        try commitUnlocks(&context, owners: participants, before: before, after: after)
    }
}
