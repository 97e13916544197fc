import Foundation
import LobbyDatabase

extension LobbyStore {
    /// Blocks a player: neither sees the other's profile, statistics or photo, nor can invite it.
    /// A player who has blocked the caller is not found, as everywhere else (unless the caller
    /// has blocked it too, which the caller knows).
    public func block(_ blocker: Int64, username: String) async throws {
        try await write { context in
            let db = context.db
            let target = try self.livePlayer(db, username: username)
            guard target.id != blocker else {
                throw LobbyError(.invalidInput, .cannotBlockYourself, "You cannot block yourself.")
            }
            try self.lockPair(db, blocker, target, username: username)
            if try self.hasBlocked(db, blocker: target.id!, blocked: blocker),
               try !self.hasBlocked(db, blocker: blocker, blocked: target.id!) {
                throw LobbyError.playerNotFound(username)
            }
            try BlockRecord(blockerId: blocker, blockedId: target.id!, createdAt: context.now)
                .insert(db, ignoringConflicts: true)
        }
    }

    /// Lifts a block; lifting one that does not exist is not an error. As for ``block(_:username:)``,
    /// a player who has blocked the caller (and is not blocked by it) is not found.
    public func unblock(_ blocker: Int64, username: String) async throws {
        try await write { context in
            let db = context.db
            let target = try self.livePlayer(db, username: username)
            try self.lockPair(db, blocker, target, username: username)
            if try self.hasBlocked(db, blocker: target.id!, blocked: blocker),
               try !self.hasBlocked(db, blocker: blocker, blocked: target.id!) {
                throw LobbyError.playerNotFound(username)
            }
            try db.execute("DELETE FROM block WHERE blockerId = ? AND blockedId = ?", blocker, target.id!)
        }
    }

    /// Locks both players of a block before its rules read the blocks between them: two players
    /// blocking each other at once must meet the rule one after the other (the second finds
    /// itself blocked), as on SQLite, and a deletion of the target must not slip in between.
    /// Then checks the target is still there.
    private func lockPair(_ db: any SQLSession, _ blocker: Int64, _ target: PlayerRecord, username: String) throws {
        try db.lock("player", ids: [blocker, target.id!])
        guard try Query.player(db, id: target.id!)?.deletedAt == nil else { throw LobbyError.playerNotFound(username) }
    }

    /// The players `owner` has unlocked, by username.
    public func unlocked(_ owner: Int64) async throws -> [UnlockedPlayer] {
        try await read { db, _ in
            // lower(): PostgreSQL would order by its collation, SQLite orders the NOCASE column
            // without case; the id settles ties on both.
            try db.fetchAll("""
                SELECT p.username, u.persistent FROM unlock u JOIN player p ON p.id = u.unlockedId
                WHERE u.ownerId = ? AND p.deletedAt IS NULL ORDER BY lower(p.username), p.id
                """, owner).map { UnlockedPlayer(username: try $0.get(0, as: String.self), persistent: try $0.get(1, as: Bool.self)) }
        }
    }

    /// The player's events after `cursor` (exclusive), oldest first, at most `limit` of them.
    public func events(_ playerId: Int64, after cursor: Int64, limit: Int = 100) async throws -> [LobbyEvent] {
        try await read { db, _ in
            try EventRecord
                .fetchAll(db, "SELECT * FROM event WHERE playerId = ? AND id > ? ORDER BY id LIMIT ?", playerId, cursor, max(1, min(limit, 1000)))
                .compactMap { record in
                    guard let kind = LobbyEvent.Kind(rawValue: record.kind) else { return nil }
                    let data = try JSONDecoder().decode(EventData.self, from: Data(record.payload.utf8))
                    return LobbyEvent(cursor: record.id!, at: record.at, kind: kind, data: data)
                }
        }
    }
}
