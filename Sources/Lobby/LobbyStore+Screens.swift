import Foundation
import LobbyDatabase
import Minigames

/// What a location's big screen shows (the web view's `/locations/{id}`): public to anyone who can
/// reach the lobby, so it holds usernames and numbers only, never a name, an identity or a contact.
///
/// A player present at the location is named only while it plays there: when it submitted a
/// verified round of one of the location's running tournaments within the encounter window (its
/// username is on that tournament's board anyway). The others present are only counted, and a
/// count under three is said as "a few". So watching a screen, from anywhere, tells nobody who sits
/// in the café without playing, nor when a player who once entered a tournament there comes back.
public struct LocationScreen: Codable, Sendable, Equatable {
    public struct Tournament: Codable, Sendable, Equatable {
        public var id: Int64
        public var period: TournamentPeriod
        public var endsAt: Date
        public var minigames: [MinigameName]
        public var entries: Int
        /// The best ``LocationScreen/boardLength`` entries, best first.
        public var standings: [TournamentStanding]
    }

    /// One verified round of a running tournament here (no time: the list must not become a
    /// record of when a player was there).
    public struct Round: Codable, Sendable, Equatable {
        public var player: String
        public var minigame: MinigameName
        public var score: Int
        public var period: TournamentPeriod
    }

    public var id: Int64
    public var name: String
    public var timeZone: String
    /// Usernames of the players present now who played a round here within the encounter window, A to Z.
    public var present: [String]
    /// Players present now who did not: counted, not named.
    public var othersPresent: Int
    /// Its running tournaments, soonest to end first.
    public var tournaments: [Tournament]
    /// The latest verified rounds of its running tournaments, newest first (at most ``LocationScreen/latestResults``).
    public var results: [Round]
    /// When the lobby read it.
    public var at: Date

    public static let boardLength = 10
    public static let latestResults = 8
}

extension LobbyStore {
    /// The location's screen as it stands now; `locationNotFound` for an unknown id.
    public func locationScreen(_ id: Int64) async throws -> LocationScreen {
        try await settleTournamentsIfDue()
        return try await read { db, now in
            guard let location = try db.fetchOne("SELECT name, timeZone FROM location WHERE id = ?", id) else {
                throw LobbyError.locationNotFound(id)
            }
            let since = now.addingTimeInterval(-self.configuration.encounterWindow).unixTime
            let present = try db.fetchAll("""
                SELECT p.username, EXISTS (
                    SELECT 1 FROM tournamentScore r JOIN tournament t ON t.id = r.tournamentId
                    WHERE r.playerId = s.playerId AND t.locationId = s.locationId AND t.state = \(TournamentState.open.sqlLiteral)
                        AND r.submittedAt >= ?)
                FROM locationSighting s JOIN player p ON p.id = s.playerId
                WHERE s.locationId = ? AND s.lastSeenAt >= ? AND p.deletedAt IS NULL
                """, since, id, since)
            var named: [String] = [], others = 0
            for row in present {
                if try row.get(1, as: Bool.self), let username = try row.get(0, as: String?.self) { named.append(username) } else { others += 1 }
            }
            let tournaments = try db.fetchAll(
                "SELECT id FROM tournament WHERE locationId = ? AND state = \(TournamentState.open.sqlLiteral) ORDER BY endsAt, id", id
            ).map { row in
                let summary = try self.tournamentSummary(db, id: try row.get(0, as: Int64.self))
                return LocationScreen.Tournament(
                    id: summary.id, period: summary.period, endsAt: summary.endsAt, minigames: summary.minigames,
                    entries: summary.entries,
                    standings: Array(try self.standings(db, tournamentId: summary.id).prefix(LocationScreen.boardLength)))
            }
            // The running tournaments' rounds only (three tournaments, read by their key), not
            // every round the location ever saw.
            let results = try db.fetchAll("""
                SELECT p.username, r.minigame, s.score, t.period
                FROM tournament t
                JOIN tournamentScore s ON s.tournamentId = t.id
                JOIN tournamentRound r ON r.tournamentId = s.tournamentId AND r.n = s.n
                JOIN player p ON p.id = s.playerId
                WHERE t.locationId = ? AND t.state = \(TournamentState.open.sqlLiteral) AND s.score IS NOT NULL AND s.submittedAt IS NOT NULL
                    AND p.deletedAt IS NULL
                ORDER BY s.submittedAt DESC, s.tournamentId DESC, s.playerId, s.n DESC
                LIMIT ?
                """, id, LocationScreen.latestResults).compactMap { row -> LocationScreen.Round? in
                guard let player = try row.get(0, as: String?.self) else { return nil }
                return LocationScreen.Round(
                    player: player, minigame: try row.get(1, as: MinigameName.self), score: try row.get(2, as: Int.self),
                    period: TournamentPeriod(rawValue: try row.get(3, as: String.self)) ?? .daily)
            }
            return LocationScreen(
                id: id, name: try location.get(0, as: String.self), timeZone: try location.get(1, as: String.self),
                present: named.sorted { $0.lowercased() < $1.lowercased() }, othersPresent: others,
                tournaments: tournaments, results: results, at: now)
        }
    }
}
