import Foundation
import GRDB

extension LobbyStore {
    /// Blocks a player: neither sees the other's profile, statistics or photo, nor can invite it.
    /// A player who has blocked the caller is not found, as everywhere else (unless the caller
    /// has blocked it too, which the caller knows).
    public func block(_ blocker: Int64, username: String) async throws {
        try await write { context in
            let target = try self.livePlayer(context.db.grdb, username: username)
            guard target.id != blocker else {
                throw LobbyError(.invalidInput, "cannotBlockYourself", "You cannot block yourself.")
            }
            if try self.hasBlocked(context.db.grdb, blocker: target.id!, blocked: blocker),
               try !self.hasBlocked(context.db.grdb, blocker: blocker, blocked: target.id!) {
                throw LobbyError.playerNotFound(username)
            }
            try BlockRecord(blockerId: blocker, blockedId: target.id!, createdAt: context.now)
                .insert(context.db.grdb, onConflict: .ignore)
        }
    }

    /// Lifts a block; lifting one that does not exist is not an error. As for ``block(_:username:)``,
    /// a player who has blocked the caller (and is not blocked by it) is not found.
    public func unblock(_ blocker: Int64, username: String) async throws {
        try await write { context in
            let target = try self.livePlayer(context.db.grdb, username: username)
            if try self.hasBlocked(context.db.grdb, blocker: target.id!, blocked: blocker),
               try !self.hasBlocked(context.db.grdb, blocker: blocker, blocked: target.id!) {
                throw LobbyError.playerNotFound(username)
            }
            _ = try BlockRecord.deleteOne(context.db.grdb, key: ["blockerId": blocker, "blockedId": target.id!])
        }
    }

    /// The players `owner` has unlocked, by username.
    public func unlocked(_ owner: Int64) async throws -> [UnlockedPlayer] {
        try await readGRDB { db, _ in
            try Row.fetchAll(db.cached("""
                SELECT p.username, u.persistent FROM unlock u JOIN player p ON p.id = u.unlockedId
                WHERE u.ownerId = ? AND p.deletedAt IS NULL ORDER BY p.username
                """), arguments: [owner]).map { UnlockedPlayer(username: $0[0], persistent: $0[1]) }
        }
    }

    /// The player's events after `cursor` (exclusive), oldest first, at most `limit` of them.
    public func events(_ playerId: Int64, after cursor: Int64, limit: Int = 100) async throws -> [LobbyEvent] {
        try await readGRDB { db, _ in
            try EventRecord
                .filter(Column("playerId") == playerId && Column("id") > cursor)
                .order(Column("id")).limit(max(1, min(limit, 1000)))
                .fetchAll(db)
                .compactMap { record in
                    guard let kind = LobbyEvent.Kind(rawValue: record.kind) else { return nil }
                    let data = try JSONDecoder().decode(EventData.self, from: Data(record.payload.utf8))
                    return LobbyEvent(cursor: record.id!, at: record.at, kind: kind, data: data)
                }
        }
    }
}
