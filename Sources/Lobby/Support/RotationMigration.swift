import Foundation
import GRDB

/// Rotating identities (issue 22). Frozen once shipped.
///
/// - `player.beaconSecret`, `location.beaconSecret`: the 32 bytes each one's rotating identity
///   is derived from (``RotatingIdentity``). Players get theirs at registration or, for those
///   registered before, when their agent next asks (sign-in, `GET /v1/players/me/beacon-key`);
///   locations at registration or when their beacon next asks.
/// - `lobbySetting`: facts about the deployment. `staticIdentitiesSince` is when a lobby that
///   already had players or locations upgraded: their old static identities resolve for
///   ``LobbyConfiguration/staticIdentityGrace`` after it. A new deployment has none to honour.
enum RotationMigration {
    static func v9(_ db: Database) throws {
        try db.alter(table: "player") { t in
            t.add(column: "beaconSecret", .blob).check(sql: "beaconSecret IS NULL OR length(beaconSecret) = 32")
        }
        try db.alter(table: "location") { t in
            t.add(column: "beaconSecret", .blob).check(sql: "beaconSecret IS NULL OR length(beaconSecret) = 32")
        }
        try db.create(table: "lobbySetting") { t in
            t.primaryKey("name", .text)
            t.column("value", .any).notNull()
        }
        let deployed = try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM player WHERE deletedAt IS NULL) OR EXISTS (SELECT 1 FROM location)
            """) ?? false
        if deployed {
            try db.execute(sql: "INSERT INTO lobbySetting (name, value) VALUES ('staticIdentitiesSince', ?)",
                           arguments: [Date().unixTime])
        }
    }
}
