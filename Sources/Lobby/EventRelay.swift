import BeaconKeys
import Foundation
import LobbyDatabase
import Logging

/// On PostgreSQL, where several instances share the store: pushes to this instance's live
/// subscribers the events any instance commits, this one included.
///
/// Each write transaction sends, on commit, a notification listing its events as `player:cursor`
/// pairs (``WriteContext/storeEvents()``). PostgreSQL delivers notifications in commit order, and
/// this relay handles them one at a time in that order, reading from the feed only the events of
/// players with a subscriber here. When the listening connection was lost, notifications sent
/// meanwhile are gone: every subscriber is told to read the feed after its last cursor.
///
/// It also keeps this instance's ``IdentityDirectory`` in step with the others: a player or
/// location that gets its beacon secret on one instance is announced on
/// ``WriteContext/identityChannel``, and every instance adds the secret to its tables, so an
/// identity resolves wherever the sighting arrives. After a lost connection all secrets are read
/// again. And sessions ended on one instance leave every instance's ``SessionCache``.
final class EventRelay: Sendable {
    /// The three listeners (events, identities, sessions), children of one task that
    /// ``stop()`` cancels.
    private let task: Task<Void, Never>

    init(database: PostgresDatabase, hub: EventHub, identities: IdentityDirectory, sessions: SessionCache, clock: any LobbyClock, logger: Logger) {
        task = Task {
            await withDiscardingTaskGroup { group in
                group.addTask { await Self.followSessions(database: database, sessions: sessions) }
                group.addTask { await Self.followIdentities(database: database, identities: identities, clock: clock, logger: logger) }
                group.addTask { await Self.followEvents(database: database, hub: hub, logger: logger) }
            }
        }
    }

    func stop() {
        task.cancel()
    }

    /// Sessions ended on another instance leave this one's cache; after a lost connection, the
    /// whole cache goes (each token is checked against the database again).
    private static func followSessions(database: PostgresDatabase, sessions: SessionCache) async {
        for await message in database.messages(on: WriteContext.sessionChannel) {
            switch message {
            case .listening:
                sessions.forgetAll()
            case .payload(let text):
                if text.hasPrefix("token:"), let hash = Data(base64Encoded: String(text.dropFirst(6))) {
                    sessions.forget(hash)
                } else if text.hasPrefix("player:"), let id = Int64(text.dropFirst(7)) {
                    sessions.forget(player: id)
                }
            }
        }
    }

    /// Adds the beacon secrets other instances announce; after a lost connection, reads them all.
    private static func followIdentities(database: PostgresDatabase, identities: IdentityDirectory, clock: any LobbyClock, logger: Logger) async {
        var listened = false
        for await message in database.messages(on: WriteContext.identityChannel) {
            do {
                switch message {
                case .listening:
                    if listened {
                        let stored = try await database.read { db in try LobbyStore.storedIdentities(db) }
                        identities.load(players: stored.players, locations: stored.locations, now: clock.now())
                    }
                    listened = true
                case .payload(let text):
                    let parts = text.split(separator: ":")
                    guard parts.count == 2, let id = Int64(parts[1]) else { continue }
                    let (owner, table): (IdentityDirectory.Owner, String) = parts[0] == "location" ? (.location, "location") : (.player, "player")
                    let bytes = try await database.read { db in try db.fetchValue(Data.self, "SELECT beaconSecret FROM \(table) WHERE id = ?", id) }
                    if let bytes, let secret = BeaconSecret(bytes: Array(bytes)) { identities.add(owner, id, secret: secret) }
                }
            } catch {
                logger.warning("Cannot read a beacon secret another instance announced (\(error)); its identity resolves here after the next reconnection.")
            }
        }
    }

    /// Pushes the events other instances (and this one) commit to this instance's subscribers.
    private static func followEvents(database: PostgresDatabase, hub: EventHub, logger: Logger) async {
        var listened = false
        for await message in database.messages(on: WriteContext.eventChannel) {
            switch message {
            case .listening:
                if listened {
                    logger.notice("Listening for other instances' events again; live clients catch up from the feed.")
                    hub.resynchronize()
                }
                listened = true
            case .payload(let text):
                let wanted = Self.pairs(text).filter { hub.hasSubscribers($0.player) }
                guard !wanted.isEmpty else { continue }
                do {
                    let events = try await database.read { db in try Self.events(db, ids: wanted.map(\.cursor)) }
                    hub.publish(events)
                } catch {
                    logger.warning("Cannot read committed events to push them (\(error)); live clients catch up from the feed.")
                    hub.resynchronize()
                }
            }
        }
    }

    /// The `player:cursor` pairs of a notification; anything else in it is passed over.
    static func pairs(_ text: String) -> [(player: Int64, cursor: Int64)] {
        text.split(separator: ",").compactMap { pair in
            let parts = pair.split(separator: ":")
            guard parts.count == 2, let player = Int64(parts[0]), let cursor = Int64(parts[1]) else { return nil }
            return (player, cursor)
        }
    }

    static func events(_ db: any SQLSession, ids: [Int64]) throws -> [(playerId: Int64, event: LobbyEvent)] {
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        return try db.fetchAll("SELECT id, playerId, at, kind, payload FROM event WHERE id IN (\(marks)) ORDER BY id", ids.map(SQLValue.integer))
            .compactMap { row in
                guard let kind = LobbyEvent.Kind(rawValue: try row.get(3, as: String.self)) else { return nil }
                let data = try JSONDecoder().decode(EventData.self, from: Data(try row.get(4, as: String.self).utf8))
                return (try row.get(1, as: Int64.self), LobbyEvent(cursor: try row.get(0), at: try row.get(2), kind: kind, data: data))
            }
    }
}
