import LobbyDatabase

/// Something players are ranked on by points: a board's period, a league group, and (as the step
/// that adds them) a location's or a tournament's totals. ``Ranking`` turns any of them into a
/// page with standard competition ranks, the caller's place and the player just ahead.
protocol RankedSource {
    /// Players on it.
    func participants(_ db: any SQLSession) throws -> Int
    /// Players with strictly more than `points`: a rank is this plus one.
    func playersAbove(_ db: any SQLSession, points: Int) throws -> Int
    /// The player's points, nil when it is not on it.
    func points(_ db: any SQLSession, of player: Int64) throws -> Int?
    /// Players in rank order (points down, then id), `limit` of them from `offset`.
    func page(_ db: any SQLSession, offset: Int, limit: Int) throws -> [(player: Int64, points: Int)]
    /// The last player in rank order with more than `points`.
    func justAhead(_ db: any SQLSession, points: Int) throws -> (player: Int64, points: Int)?
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
    func add(_ db: any SQLSession, player: Int64, points: Int) throws {
        guard points > 0 else { return }
        let old = try self.points(db, of: player)
        let new = (old ?? 0) + points
        if let old {
            try db.execute("UPDATE boardPoints SET points = ? WHERE board = ? AND period = ? AND playerId = ?", new, board, period, player)
            try untally(db, points: old)
        } else {
            try db.execute("INSERT INTO boardPoints (board, period, playerId, points) VALUES (?, ?, ?, ?)", board, period, player, new)
        }
        try db.execute("""
            INSERT INTO boardTally (board, period, points, players) VALUES (?, ?, ?, 1)
            ON CONFLICT (board, period, points) DO UPDATE SET players = boardTally.players + 1
            """, board, period, new)
    }

    /// Takes the player (which has `points` here) off the board.
    func remove(_ db: any SQLSession, player: Int64, points: Int) throws {
        try db.execute("DELETE FROM boardPoints WHERE board = ? AND period = ? AND playerId = ?", board, period, player)
        try untally(db, points: points)
    }

    private func untally(_ db: any SQLSession, points: Int) throws {
        try db.execute("UPDATE boardTally SET players = players - 1 WHERE board = ? AND period = ? AND points = ?", board, period, points)
        try db.execute("DELETE FROM boardTally WHERE board = ? AND period = ? AND points = ? AND players = 0", board, period, points)
    }

    func participants(_ db: any SQLSession) throws -> Int {
        try db.fetchValue(Int.self, "SELECT COALESCE(SUM(players), 0) FROM boardTally WHERE board = ? AND period = ?", board, period) ?? 0
    }

    func playersAbove(_ db: any SQLSession, points: Int) throws -> Int {
        try db.fetchValue(Int.self, "SELECT COALESCE(SUM(players), 0) FROM boardTally WHERE board = ? AND period = ? AND points > ?",
                          board, period, points) ?? 0
    }

    /// Whether the player with `points` is among the first `places` ranks, reading at most that many tally rows.
    func isAmongFirst(_ db: any SQLSession, places: Int, points: Int) throws -> Bool {
        let above = try db.fetchValue(Int.self, """
            SELECT COALESCE(SUM(players), 0) FROM (SELECT players FROM boardTally WHERE board = ? AND period = ? AND points > ?
            ORDER BY points DESC LIMIT ?) AS firstPlaces
            """, board, period, points, places) ?? 0
        return above < places
    }

    /// Whether at least `count` players are on the board.
    func hasAtLeast(_ db: any SQLSession, _ count: Int) throws -> Bool {
        try db.fetchValue(Int.self, """
            SELECT COUNT(*) FROM (SELECT 1 FROM boardPoints WHERE board = ? AND period = ? LIMIT ?) AS onBoard
            """, board, period, count) == count
    }

    func points(_ db: any SQLSession, of player: Int64) throws -> Int? {
        try db.fetchValue(Int.self, "SELECT points FROM boardPoints WHERE board = ? AND period = ? AND playerId = ?", board, period, player)
    }

    /// Deep pages seek through the tally to the points value at `offset`, then skip only the
    /// players with that value listed before it.
    func page(_ db: any SQLSession, offset: Int, limit: Int) throws -> [(player: Int64, points: Int)] {
        var ceiling = Int.max
        var skip = offset
        if offset > 0 {
            // The first points value whose players reach past `offset`, found by the database
            // from a running count (a window function, in SQLite and PostgreSQL alike), so only
            // that one row comes back.
            guard let row = try db.fetchOne("""
                SELECT points, playersBefore FROM (
                    SELECT points, players, SUM(players) OVER (ORDER BY points DESC) - players AS playersBefore
                    FROM boardTally WHERE board = ? AND period = ?
                ) AS running
                WHERE playersBefore + players > ? ORDER BY points DESC LIMIT 1
                """, board, period, offset)
            else { return [] }
            ceiling = try row.get(0, as: Int.self)
            skip = offset - (try row.get(1, as: Int.self))
        }
        return try db.fetchAll("""
            SELECT playerId, points FROM boardPoints WHERE board = ? AND period = ? AND points <= ?
            ORDER BY points DESC, playerId LIMIT ? OFFSET ?
            """, board, period, ceiling, limit, skip).map { (try $0.get(0, as: Int64.self), try $0.get(1, as: Int.self)) }
    }

    func justAhead(_ db: any SQLSession, points: Int) throws -> (player: Int64, points: Int)? {
        try db.fetchOne("""
            SELECT playerId, points FROM boardPoints WHERE board = ? AND period = ? AND points > ?
            ORDER BY points, playerId DESC LIMIT 1
            """, board, period, points).map { (try $0.get(0, as: Int64.self), try $0.get(1, as: Int.self)) }
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
    var arguments: [any SQLValueConvertible]
    var playerColumn = "playerId"
    var pointsColumn = "points"

    func participants(_ db: any SQLSession) throws -> Int {
        try db.fetchValue(Int.self, "SELECT COUNT(*) FROM \(table) WHERE \(filter)", arguments.map(\.sqlValue)) ?? 0
    }

    func playersAbove(_ db: any SQLSession, points: Int) throws -> Int {
        try db.fetchValue(Int.self, "SELECT COUNT(*) FROM \(table) WHERE \(filter) AND \(pointsColumn) > ?",
                          (arguments + [points]).map(\.sqlValue)) ?? 0
    }

    func points(_ db: any SQLSession, of player: Int64) throws -> Int? {
        try db.fetchValue(Int.self, "SELECT \(pointsColumn) FROM \(table) WHERE \(filter) AND \(playerColumn) = ?",
                          (arguments + [player]).map(\.sqlValue))
    }

    func page(_ db: any SQLSession, offset: Int, limit: Int) throws -> [(player: Int64, points: Int)] {
        try db.fetchAll("""
            SELECT \(playerColumn), \(pointsColumn) FROM \(table) WHERE \(filter)
            ORDER BY \(pointsColumn) DESC, \(playerColumn) LIMIT ? OFFSET ?
            """, (arguments + [limit, offset]).map(\.sqlValue)).map { (try $0.get(0, as: Int64.self), try $0.get(1, as: Int.self)) }
    }

    func justAhead(_ db: any SQLSession, points: Int) throws -> (player: Int64, points: Int)? {
        try db.fetchOne("""
            SELECT \(playerColumn), \(pointsColumn) FROM \(table) WHERE \(filter) AND \(pointsColumn) > ?
            ORDER BY \(pointsColumn), \(playerColumn) DESC LIMIT 1
            """, (arguments + [points]).map(\.sqlValue)).map { (try $0.get(0, as: Int64.self), try $0.get(1, as: Int.self)) }
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
    static func page(_ db: any SQLSession, _ source: some RankedSource, offset: Int, limit: Int) throws -> [Place] {
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
    static func place(_ db: any SQLSession, _ source: some RankedSource, of player: Int64) throws -> Place? {
        guard let points = try source.points(db, of: player) else { return nil }
        return Place(player: player, points: points, rank: 1 + (try source.playersAbove(db, points: points)))
    }

    /// The player just ahead of one with `points`, with its rank.
    static func ahead(_ db: any SQLSession, _ source: some RankedSource, of points: Int) throws -> Place? {
        guard let row = try source.justAhead(db, points: points) else { return nil }
        return Place(player: row.player, points: row.points, rank: 1 + (try source.playersAbove(db, points: row.points)))
    }
}
