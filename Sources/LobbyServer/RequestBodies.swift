import Foundation
import Lobby
import Minigames

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
    /// Required with `password`.
    var currentPassword: String?
    var username: String?
    var email: String?
    var timeZone: String?
    var country: String?
}

/// `POST /v1/encounters`; `key` makes a repeat of the report answer as the first one did.
struct EncountersRequest: Decodable {
    var sightings: [EncounterReport]
    var key: String?
}

/// `POST /v1/invitations`; `key` makes a repeat of the request answer as the first one did.
struct InvitationRequest: Decodable {
    var invitees: [String]
    var key: String?
}

/// `POST /v1/games/{id}/rounds/{n}/scores`: the claimed score and the round's recording (the
/// Minigames JSON of ``RoundRecording``), which the lobby verifies the score on.
struct ScoreSubmission: Decodable {
    /// Largest body accepted, in bytes: 10 s of accelerometer samples at about 1.5 kHz.
    static let maximumBytes = 1024 * 1024

    var score: Int
    var key: String
    var recording: RoundRecording
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
