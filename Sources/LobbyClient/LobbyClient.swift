import AsyncHTTPClient
import Foundation
import Logging
import Minigames
import NIOCore
import NIOHTTP1
import SensorSamples

/// The agent's typed client for the lobby API (`/v1`). A value type: `authenticated(_:)` returns
/// a copy that sends a bearer token. Errors from the API arrive as ``LobbyClientError``.
public struct LobbyClient: Sendable {
    public let baseURL: String
    public let token: String?
    let httpClient: HTTPClient
    /// How long one request may take before it is abandoned.
    public var timeout: TimeAmount = .seconds(30)
    /// Where the live event stream logs its connections (debug level).
    public var logger = Logger(label: "nearplay.lobby-client")

    /// - Parameter baseURL: the server's root, e.g. `http://127.0.0.1:8080`.
    public init(baseURL: String, httpClient: HTTPClient = .shared, token: String? = nil) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.httpClient = httpClient
        self.token = token
    }

    /// The same client, sending `token`.
    public func authenticated(_ token: String) -> LobbyClient {
        var copy = LobbyClient(baseURL: baseURL, httpClient: httpClient, token: token)
        copy.timeout = timeout
        copy.logger = logger
        return copy
    }

    public func health() async throws -> Bool {
        struct Health: Decodable { var status: String }
        return try await send(.GET, "/v1/health", as: Health.self).status == "ok"
    }

    public func register(username: String, firstName: String, lastName: String, email: String, password: String) async throws -> PlayerProfile {
        struct Body: Encodable { var username, firstName, lastName, email, password: String }
        return try await send(.POST, "/v1/players", body: Body(username: username, firstName: firstName, lastName: lastName, email: email, password: password))
    }

    public func logIn(username: String, password: String) async throws -> Session {
        struct Body: Encodable { var username, password: String }
        return try await send(.POST, "/v1/sessions", body: Body(username: username, password: password))
    }

    public func me() async throws -> PlayerProfile { try await send(.GET, "/v1/players/me") }

    public func updateMe(firstName: String? = nil, lastName: String? = nil, password: String? = nil) async throws -> PlayerProfile {
        struct Body: Encodable { var firstName, lastName, password: String? }
        return try await send(.PATCH, "/v1/players/me", body: Body(firstName: firstName, lastName: lastName, password: password))
    }

    public func deleteMe() async throws { try await sendExpectingNothing(.DELETE, "/v1/players/me") }

    public func setPhoto(_ bytes: Data) async throws -> PlayerProfile {
        try await send(.PUT, "/v1/players/me/photo", rawBody: bytes)
    }

    public func resolve(_ beacon: PlayerBeacon) async throws -> PublicProfile {
        try await send(.GET, "/v1/beacons/\(beacon.uuid.uuidString)/\(beacon.major)/\(beacon.minor)")
    }

    /// Reports the player beacons the agent saw. With a `key` (one per report, kept until the
    /// lobby acknowledged it), sending the same report again records nothing twice and returns the
    /// first receipt.
    public func reportEncounters(_ sightings: [EncounterSighting], key: String? = nil) async throws -> EncounterReceipt {
        struct Body: Encodable { var sightings: [EncounterSighting]; var key: String? }
        return try await send(.POST, "/v1/encounters", body: Body(sightings: sightings, key: key))
    }


    /// Invites players to a game. With a `key`, sending the same request again creates nothing
    /// and returns the invitation the first one created.
    public func invite(_ usernames: [String], key: String? = nil) async throws -> Invitation {
        struct Body: Encodable { var invitees: [String]; var key: String? }
        return try await send(.POST, "/v1/invitations", body: Body(invitees: usernames, key: key))
    }

    public func invitations() async throws -> [Invitation] { try await send(.GET, "/v1/invitations") }

    /// Accepts an invitation; accepting again (a retry) returns the invitation.
    public func accept(invitation id: Int64) async throws -> Invitation { try await send(.POST, "/v1/invitations/\(id)/accept") }

    /// Declines an invitation; declining again (a retry) returns the invitation.
    public func decline(invitation id: Int64) async throws -> Invitation { try await send(.POST, "/v1/invitations/\(id)/decline") }

    public func games() async throws -> [LobbyGame] { try await send(.GET, "/v1/games") }

    public func game(_ id: Int64) async throws -> LobbyGame { try await send(.GET, "/v1/games/\(id)") }

    /// Submits a round's score with the recording it was computed from, which the lobby verifies
    /// (status 422, code `scoreRefused`, when the claim does not stand); resubmitting with the same
    /// `key` (after a timeout, say) is safe. Record the round on the plan the game gives
    /// (``LobbyGame/Round/duration``, ``LobbyGame/Round/signalTime``).
    public func submitScore(game id: Int64, round n: Int, score: Int, recording: RoundRecording, key: String) async throws -> LobbyGame {
        struct Body: Encodable { var score: Int; var key: String; var recording: RoundRecording }
        return try await send(.POST, "/v1/games/\(id)/rounds/\(n)/scores", body: Body(score: score, key: key, recording: recording))
    }

    /// Stores this device's calibration, which the lobby verifies the player's scores with
    /// (status 422, code `calibrationRefused`, for one no device at rest gives).
    @discardableResult
    public func setCalibration(_ calibration: SensorCalibration) async throws -> SensorCalibration {
        try await send(.PUT, "/v1/players/me/calibration", body: calibration)
    }

    /// The calibration stored for the player's device, nil when none is.
    public func calibration() async throws -> SensorCalibration? {
        do {
            return try await send(.GET, "/v1/players/me/calibration", as: SensorCalibration.self)
        } catch let error as LobbyClientError where error.status == 404 && error.code == "calibrationNotFound" {
            return nil
        }
    }

    public func unlocked() async throws -> [UnlockedPlayer] { try await send(.GET, "/v1/unlocked") }

    public func block(_ username: String) async throws { try await sendExpectingNothing(.POST, "/v1/blocks/\(escaped(username))") }

    public func unblock(_ username: String) async throws { try await sendExpectingNothing(.DELETE, "/v1/blocks/\(escaped(username))") }

    /// Events after `cursor`; continue from the returned page's `next`.
    public func events(after cursor: Int64, limit: Int = 100) async throws -> EventPage {
        try await send(.GET, "/v1/events?after=\(cursor)&limit=\(limit)")
    }

    // MARK: - Transport

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        return encoder
    }()

    /// Decodes the lobby's JSON (and the agent's answers, which pass it on): ISO 8601 times with
    /// or without fractions of a second.
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
            return try Date(text, strategy: .iso8601)
        }
        return decoder
    }()

    func escaped(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? segment
    }

    func send<Response: Decodable>(_ method: HTTPMethod, _ path: String, as: Response.Type = Response.self) async throws -> Response {
        try await send(method, path, rawBody: nil)
    }

    func send<Response: Decodable>(_ method: HTTPMethod, _ path: String, body: some Encodable) async throws -> Response {
        try await send(method, path, rawBody: try Self.encoder.encode(body), contentType: "application/json")
    }

    private func send<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, rawBody: Data?, contentType: String = "application/octet-stream"
    ) async throws -> Response {
        let data = try await perform(method, path, rawBody: rawBody, contentType: contentType)
        return try Self.decoder.decode(Response.self, from: data)
    }

    private func sendExpectingNothing(_ method: HTTPMethod, _ path: String) async throws {
        _ = try await perform(method, path, rawBody: nil, contentType: "application/json")
    }

    private func perform(_ method: HTTPMethod, _ path: String, rawBody: Data?, contentType: String) async throws -> Data {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let rawBody {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: rawBody))
        }
        let response = try await httpClient.execute(request, timeout: timeout)
        let body = Data((try await response.body.collect(upTo: 16 * 1024 * 1024)).readableBytesView)
        guard (200..<300).contains(response.status.code) else {
            struct ErrorBody: Decodable {
                struct Detail: Decodable { var code: String; var message: String; var excluded: [Invitation.Excluded]? }
                var error: Detail
            }
            let detail = (try? Self.decoder.decode(ErrorBody.self, from: body))?.error
            throw LobbyClientError(
                status: Int(response.status.code), code: detail?.code ?? "http\(response.status.code)",
                message: detail?.message ?? String(decoding: body.prefix(200), as: UTF8.self), excluded: detail?.excluded ?? [])
        }
        return body
    }
}
