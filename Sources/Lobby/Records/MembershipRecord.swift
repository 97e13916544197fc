import Foundation
import LobbyDatabase

/// A row of `membership`: a player's place in a game. The inviter's row is `accepted` from the
/// start; the participants of an open game are exactly the members whose response is `accepted`.
struct MembershipRecord: SQLRecord {
    static let databaseTableName = "membership"
    enum Role: String, SQLValueConvertible { case inviter, invitee }
    var gameId: Int64
    var playerId: Int64
    var role: Role
    var response: InvitationResponse
    var respondedAt: Date?
}

extension MembershipRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "gameId, playerId, role, response, respondedAt"

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
}
