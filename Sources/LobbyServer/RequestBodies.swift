import Foundation
import Lobby

/// `POST /v1/sessions`.
struct LogInRequest: Decodable {
    var username: String
    var password: String
}

/// `PATCH /v1/players/me`: every field optional; username and e-mail are refused, they never change.
struct PlayerPatch: Decodable {
    var firstName: String?
    var lastName: String?
    var password: String?
    var username: String?
    var email: String?
}

/// `POST /v1/encounters`.
struct EncounterReport: Decodable {
    var sightings: [Sighting]
}

/// `POST /v1/invitations`.
struct InvitationRequest: Decodable {
    var invitees: [String]
}

/// `POST /v1/games/{id}/rounds/{n}/scores`.
struct ScoreSubmission: Decodable {
    var score: Int
    var key: String
}

/// `GET /v1/events`: a page of the feed and the cursor to ask for next.
struct EventPage: Encodable {
    var events: [LobbyEvent]
    var next: Int64
}

/// `GET /v1/health`.
struct Health: Encodable {
    var status: String
}
