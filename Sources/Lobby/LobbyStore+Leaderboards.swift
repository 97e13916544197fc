import Foundation
import GRDB
import LobbyDatabase

/// The boards a caller can ask for. Day, week and month are windows in the caller's zone (its
/// current one, or the one holding `date`); each player's points count in the window of its own
/// zone at the time it earned them, so a game played at 23:30 in Oslo is on that Oslo day's board.
///
/// A location's board ranks the tournament scores earned at it, all time (a ``TalliedBoard`` named
/// `location:ID`, fed by each verified tournament score); a tournament's board ranks its entries'
/// totals (a ``TableRanking`` over `tournamentEntry`, entries that played a round), with the same
/// competition ranks as every board (the tournament's own ranking breaks ties by who got there first).
public enum BoardKind: Sendable, Equatable {
    case day, week, month, allTime
    /// The caller's league group this week.
    case league
    case location(Int64)
    case tournament(Int64)

    /// Parses `day`, `week`, `month`, `all`, `league`, `location:ID` or `tournament:ID`.
    public init(parsing text: String) throws {
        switch text {
        case "day": self = .day
        case "week": self = .week
        case "month": self = .month
        case "all": self = .allTime
        case "league": self = .league
        default:
            let parts = text.split(separator: ":", maxSplits: 1)
            if parts.count == 2, let id = Int64(parts[1]), id > 0 {
                if parts[0] == "location" { self = .location(id); return }
                if parts[0] == "tournament" { self = .tournament(id); return }
            }
            throw LobbyError(.notFound, .boardNotFound,
                "There is no board \"\(text.prefix(40))\": ask for day, week, month, all, league, location:ID or tournament:ID.")
        }
    }

    public var name: String {
        switch self {
        case .day: "day"
        case .week: "week"
        case .month: "month"
        case .allTime: "all"
        case .league: "league"
        case .location(let id): "location:\(id)"
        case .tournament(let id): "tournament:\(id)"
        }
    }
}

extension LobbyStore {
    static func locationBoard(_ id: Int64) -> TalliedBoard { TalliedBoard(board: "location:\(id)", period: 0) }

    /// Adds a verified tournament score to the board of the tournament's location.
    func addLocationPoints(_ db: any SQLSession, tournament: Int64, player: Int64, points: Int) throws {
        guard let location = try db.fetchValue(Int64.self, "SELECT locationId FROM tournament WHERE id = ?", tournament) else { return }
        try Self.locationBoard(location).add(db, player: player, points: points)
    }

    /// Most entries one page holds.
    public static let maximumBoardPage = 100

    /// A page of a board as `viewer` sees it: entries from `offset`, the viewer's own place, the
    /// number of participants and the player just ahead of the viewer. `date` (`YYYY-MM-DD`, in
    /// the viewer's zone) picks another window than the current one.
    public func leaderboard(
        viewer: Int64, board kind: BoardKind, date: String? = nil, offset: Int = 0, limit: Int = 20
    ) async throws -> Leaderboard {
        guard offset >= 0 else { throw LobbyError.invalid("offset", "must be 0 or more, got \(offset).") }
        guard (1...Self.maximumBoardPage).contains(limit) else {
            throw LobbyError.invalid("limit", "must be 1…\(Self.maximumBoardPage), got \(limit).")
        }
        let chosenDay = try date.map { text in
            guard let day = LocalCalendar.day(fromText: text) else {
                throw LobbyError.invalid("date", "\"\(text.prefix(40))\" is not a date like 2026-11-23.")
            }
            return day
        }
        return try await read { db, now in
            _ = try self.livePlayer(db, id: viewer)
            let calendar = try self.calendar(db, playerId: viewer)
            let day = chosenDay ?? calendar.day(of: now)
            switch kind {
            case .league:
                return try self.leagueBoard(db, viewer: viewer, week: LocalCalendar.week(ofDay: day), offset: offset, limit: limit)
            case .location(let id):
                guard try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM location WHERE id = ?)", id) == true else {
                    throw LobbyError(.notFound, .locationNotFound, "There is no location \(id).")
                }
                return try self.leaderboard(db, Self.locationBoard(id), viewer: viewer, name: kind.name, offset: offset, limit: limit)
            case .tournament(let id):
                guard try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM tournament WHERE id = ?)", id) == true else {
                    throw LobbyError(.notFound, .tournamentNotFound, "There is no tournament \(id).")
                }
                let entries = TableRanking(
                    table: "tournamentEntry",
                    filter: "tournamentId = ? AND roundsPlayed > 0 AND playerId IN (SELECT id FROM player WHERE deletedAt IS NULL)",
                    arguments: [id], pointsColumn: "total")
                return try self.leaderboard(db, entries, viewer: viewer, name: kind.name, offset: offset, limit: limit)
            case .day, .week, .month, .allTime:
                break
            }
            let (board, window) = Self.tallied(kind, day: day, zone: calendar.name)
            return try self.leaderboard(db, board, viewer: viewer, name: kind.name, offset: offset, limit: limit,
                                        decorate: { $0.window = window })
        }
    }

    /// The tallied board and window of a windowed kind for `day`.
    static func tallied(_ kind: BoardKind, day: Int, zone: String) -> (TalliedBoard, Leaderboard.Window?) {
        func window(_ first: Int, _ last: Int) -> Leaderboard.Window {
            .init(start: LocalCalendar.text(ofDay: first), end: LocalCalendar.text(ofDay: last), timeZone: zone)
        }
        switch kind {
        case .day:
            return (.day(day), window(day, day))
        case .week:
            let monday = LocalCalendar.week(ofDay: day)
            return (.week(ofDay: day), window(monday, monday + 6))
        case .month:
            let month = LocalCalendar.month(ofDay: day)
            return (.month(ofDay: day), window(LocalCalendar.firstDay(ofMonth: month), LocalCalendar.firstDay(ofMonth: month + 1) - 1))
        case .allTime, .league, .location, .tournament:
            return (.allTime, nil)
        }
    }

    /// Any ranked source as a board page for `viewer`; `decorate` adds what is particular to it.
    func leaderboard(
        _ db: any SQLSession, _ source: some RankedSource, viewer: Int64, name: String, offset: Int, limit: Int,
        movement: (Int, Int) -> String? = { _, _ in nil }, decorate: (inout Leaderboard) -> Void = { _ in }
    ) throws -> Leaderboard {
        let participants = try source.participants(db)
        let places = try Ranking.page(db, source, offset: offset, limit: limit)
        let me = try Ranking.place(db, source, of: viewer)
        let ahead = try me.flatMap { try Ranking.ahead(db, source, of: $0.points) }
        let names = try names(db, places.map(\.player) + [me?.player, ahead?.player].compactMap { $0 })
        func entry(_ place: Ranking.Place) -> Leaderboard.Entry {
            .init(rank: place.rank, username: names[place.player] ?? "", points: place.points,
                  movement: movement(place.rank, participants))
        }
        var board = Leaderboard(
            board: name, window: nil, league: nil, participants: participants, offset: offset, limit: limit,
            entries: places.map(entry), me: me.map(entry), ahead: ahead.map(entry))
        decorate(&board)
        return board
    }
}
