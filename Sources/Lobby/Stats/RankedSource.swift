import GRDB

/// Something players are ranked on by points: a board's period, a league group, and (as the step
/// that adds them) a location's or a tournament's totals. ``Ranking`` turns any of them into a
/// page with standard competition ranks, the caller's place and the player just ahead.
protocol RankedSource {
    /// Players on it.
    func participants(_ db: Database) throws -> Int
    /// Players with strictly more than `points`: a rank is this plus one.
    func playersAbove(_ db: Database, points: Int) throws -> Int
    /// The player's points, nil when it is not on it.
    func points(_ db: Database, of player: Int64) throws -> Int?
    /// Players in rank order (points down, then id), `limit` of them from `offset`.
    func page(_ db: Database, offset: Int, limit: Int) throws -> [(player: Int64, points: Int)]
    /// The last player in rank order with more than `points`.
    func justAhead(_ db: Database, points: Int) throws -> (player: Int64, points: Int)?
}

/// A board kept in `boardPoints` (one row per player and period) with `boardTally` (players per
/// points value), so that a rank or a deep page costs a walk over distinct points values, not over
/// players. `board` names the board, `period` its window (see ``LocalCalendar``): a day number,
/// the Monday of a week, a month number, or 0 for boards without a window.
struct TalliedBoard: RankedSource, Equatable {
    var board: String
    var period: Int

    static func day(_ day: Int) -> TalliedBoard { TalliedBoard(board: "day", period: day) }
    static func week(ofDay day: Int) -> TalliedBoard { TalliedBoard(board: "week", period: LocalCalendar.week(ofDay: day)) }
    static func month(ofDay day: Int) -> TalliedBoard { TalliedBoard(board: "month", period: LocalCalendar.month(ofDay: day)) }
    static let allTime = TalliedBoard(board: "all", period: 0)

    /// Adds `points` (more than 0) to the player's points on this board.
    func add(_ db: Database, player: Int64, points: Int) throws {
        guard points > 0 else { return }
        let old = try self.points(db, of: player)
        let new = (old ?? 0) + points
        if let old {
            try db.cached("UPDATE boardPoints SET points = ? WHERE board = ? AND period = ? AND playerId = ?")
                .execute(arguments: [new, board, period, player])
            try untally(db, points: old)
        } else {
            try db.cached("INSERT INTO boardPoints (board, period, playerId, points) VALUES (?, ?, ?, ?)")
                .execute(arguments: [board, period, player, new])
        }
        try db.cached("""
            INSERT INTO boardTally (board, period, points, players) VALUES (?, ?, ?, 1)
            ON CONFLICT (board, period, points) DO UPDATE SET players = players + 1
            """).execute(arguments: [board, period, new])
    }

    /// Takes the player (which has `points` here) off the board.
    func remove(_ db: Database, player: Int64, points: Int) throws {
        try db.cached("DELETE FROM boardPoints WHERE board = ? AND period = ? AND playerId = ?").execute(arguments: [board, period, player])
        try untally(db, points: points)
    }

    private func untally(_ db: Database, points: Int) throws {
        try db.cached("UPDATE boardTally SET players = players - 1 WHERE board = ? AND period = ? AND points = ?")
            .execute(arguments: [board, period, points])
        try db.cached("DELETE FROM boardTally WHERE board = ? AND period = ? AND points = ? AND players = 0")
            .execute(arguments: [board, period, points])
    }

    func participants(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cached("SELECT COALESCE(SUM(players), 0) FROM boardTally WHERE board = ? AND period = ?"),
                         arguments: [board, period]) ?? 0
    }

    func playersAbove(_ db: Database, points: Int) throws -> Int {
        try Int.fetchOne(db.cached("SELECT COALESCE(SUM(players), 0) FROM boardTally WHERE board = ? AND period = ? AND points > ?"),
                         arguments: [board, period, points]) ?? 0
    }

    /// Whether the player with `points` is among the first `places` ranks, reading at most that many tally rows.
    func isAmongFirst(_ db: Database, places: Int, points: Int) throws -> Bool {
        let above = try Int.fetchOne(db.cached("""
            SELECT COALESCE(SUM(players), 0) FROM (SELECT players FROM boardTally WHERE board = ? AND period = ? AND points > ?
            ORDER BY points DESC LIMIT ?)
            """), arguments: [board, period, points, places]) ?? 0
        return above < places
    }

    /// Whether at least `count` players are on the board.
    func hasAtLeast(_ db: Database, _ count: Int) throws -> Bool {
        try Int.fetchOne(db.cached("""
            SELECT COUNT(*) FROM (SELECT 1 FROM boardPoints WHERE board = ? AND period = ? LIMIT ?)
            """), arguments: [board, period, count]) == count
    }

    func points(_ db: Database, of player: Int64) throws -> Int? {
        try Int.fetchOne(db.cached("SELECT points FROM boardPoints WHERE board = ? AND period = ? AND playerId = ?"),
                         arguments: [board, period, player])
    }

    /// Deep pages seek through the tally to the points value at `offset`, then skip only the
    /// players with that value listed before it.
    func page(_ db: Database, offset: Int, limit: Int) throws -> [(player: Int64, points: Int)] {
        var ceiling = Int.max
        var skip = offset
        if offset > 0 {
            let values = try Row.fetchCursor(db.cached("""
                SELECT points, players FROM boardTally WHERE board = ? AND period = ? ORDER BY points DESC
                """), arguments: [board, period])
            var found = false
            while let row = try values.next() {
                let (points, players): (Int, Int) = (row[0], row[1])
                if players > skip {
                    ceiling = points
                    found = true
                    break
                }
                skip -= players
            }
            guard found else { return [] }
        }
        return try Row.fetchAll(db.cached("""
            SELECT playerId, points FROM boardPoints WHERE board = ? AND period = ? AND points <= ?
            ORDER BY points DESC, playerId LIMIT ? OFFSET ?
            """), arguments: [board, period, ceiling, limit, skip]).map { ($0[0], $0[1]) }
    }

    func justAhead(_ db: Database, points: Int) throws -> (player: Int64, points: Int)? {
        try Row.fetchOne(db.cached("""
            SELECT playerId, points FROM boardPoints WHERE board = ? AND period = ? AND points > ?
            ORDER BY points, playerId DESC LIMIT 1
            """), arguments: [board, period, points]).map { ($0[0], $0[1]) }
    }
}

/// A ranked source that is a plain filtered table with a player and a points column: a league
/// group here, and the shape a tournament's or a location's totals can take. Its ranks are counts
/// over its rows, so keep such sources small or indexed on (filter…, points DESC, player).
struct TableRanking: RankedSource {
    /// `table` and `filter` are SQL written in this module, never from input; the values of the
    /// filter's `?` go in `arguments`.
    var table: String
    var filter: String
    var arguments: StatementArguments
    var playerColumn = "playerId"
    var pointsColumn = "points"

    func participants(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cached("SELECT COUNT(*) FROM \(table) WHERE \(filter)"), arguments: arguments) ?? 0
    }

    func playersAbove(_ db: Database, points: Int) throws -> Int {
        try Int.fetchOne(db.cached("SELECT COUNT(*) FROM \(table) WHERE \(filter) AND \(pointsColumn) > ?"),
                         arguments: arguments + [points]) ?? 0
    }

    func points(_ db: Database, of player: Int64) throws -> Int? {
        try Int.fetchOne(db.cached("SELECT \(pointsColumn) FROM \(table) WHERE \(filter) AND \(playerColumn) = ?"),
                         arguments: arguments + [player])
    }

    func page(_ db: Database, offset: Int, limit: Int) throws -> [(player: Int64, points: Int)] {
        try Row.fetchAll(db.cached("""
            SELECT \(playerColumn), \(pointsColumn) FROM \(table) WHERE \(filter)
            ORDER BY \(pointsColumn) DESC, \(playerColumn) LIMIT ? OFFSET ?
            """), arguments: arguments + [limit, offset]).map { ($0[0], $0[1]) }
    }

    func justAhead(_ db: Database, points: Int) throws -> (player: Int64, points: Int)? {
        try Row.fetchOne(db.cached("""
            SELECT \(playerColumn), \(pointsColumn) FROM \(table) WHERE \(filter) AND \(pointsColumn) > ?
            ORDER BY \(pointsColumn), \(playerColumn) DESC LIMIT 1
            """), arguments: arguments + [points]).map { ($0[0], $0[1]) }
    }
}

/// Standard competition ranking over any ``RankedSource``.
enum Ranking {
    struct Place: Equatable {
        var player: Int64
        var points: Int
        var rank: Int
    }

    /// A page of `source` with ranks: the first row's rank is counted, the next ones follow from
    /// their position (a new points value takes rank offset + position + 1; the same value keeps it).
    static func page(_ db: Database, _ source: some RankedSource, offset: Int, limit: Int) throws -> [Place] {
        let rows = try source.page(db, offset: offset, limit: limit)
        var places: [Place] = []
        places.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            let rank: Int
            if let previous = places.last {
                rank = previous.points == row.points ? previous.rank : offset + index + 1
            } else {
                rank = 1 + (try source.playersAbove(db, points: row.points))
            }
            places.append(Place(player: row.player, points: row.points, rank: rank))
        }
        return places
    }

    /// The player's place, nil when it is not on the source.
    static func place(_ db: Database, _ source: some RankedSource, of player: Int64) throws -> Place? {
        guard let points = try source.points(db, of: player) else { return nil }
        return Place(player: player, points: points, rank: 1 + (try source.playersAbove(db, points: points)))
    }

    /// The player just ahead of one with `points`, with its rank.
    static func ahead(_ db: Database, _ source: some RankedSource, of points: Int) throws -> Place? {
        guard let row = try source.justAhead(db, points: points) else { return nil }
        return Place(player: row.player, points: row.points, rank: 1 + (try source.playersAbove(db, points: row.points)))
    }
}
