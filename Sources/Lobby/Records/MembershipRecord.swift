import Foundation
import GRDB
import LobbyDatabase

/// A row of `membership`: a player's place in a game. The inviter's row is `accepted` from the
/// start; the participants of an open game are exactly the members whose response is `accepted`.
struct MembershipRecord: FetchableRecord, PersistableRecord, SQLRecord {
    static let databaseTableName = "membership"
    enum Role: String, DatabaseValueConvertible, SQLValueConvertible { case inviter, invitee }
    var gameId: Int64
    var playerId: Int64
    var role: Role
    var response: InvitationResponse
    var respondedAt: Date?
}

extension MembershipRecord {
    /// The columns in the order ``init(row:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "gameId, playerId, role, response, respondedAt"

    init(row: Row) throws {
        gameId = row[0]
        playerId = row[1]
        role = row[2]
        response = row[3]
        respondedAt = row.date(atIndex: 4)
    }

    init(sqlRow row: SQLRow) throws {
        gameId = try row.get(0)
        playerId = try row.get(1)
        role = try row.get(2)
        response = try row.get(3)
        respondedAt = try row.get(4)
    }

    var sqlValues: [SQLValue] {
        [
            gameId.sqlValue,
            playerId.sqlValue,
            role.sqlValue,
            response.sqlValue,
            respondedAt.sqlValue,
        ]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["gameId"] = gameId
        container["playerId"] = playerId
        container["role"] = role
        container["response"] = response
        container["respondedAt"] = respondedAt?.unixTime
    }
}
