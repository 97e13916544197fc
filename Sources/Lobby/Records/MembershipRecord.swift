import Foundation
import GRDB

/// A row of `membership`: a player's place in a game. The inviter's row is `accepted` from the
/// start; the participants of an open game are exactly the members whose response is `accepted`.
struct MembershipRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "membership"
    enum Role: String, Codable { case inviter, invitee }
    var gameId: Int64
    var playerId: Int64
    var role: Role
    var response: InvitationResponse
    var respondedAt: Date?
}
