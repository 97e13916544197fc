import AsyncHTTPClient
import BeaconFrames
import HTTPTypes
import Foundation
import LobbyAPI
import Logging
import Minigames
import NIOCore
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import SensorSamples

/// The agent's typed client for the lobby API (`/v1`): each call is an operation of the client
/// generated from the lobby's OpenAPI document (``LobbyAPI``). A value type: `authenticated(_:)`
/// returns a copy that sends a bearer token. Error answers arrive as ``LobbyClientError``;
/// transport errors (`HTTPClientError`) as they are.
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
        try await call { try await $0.getHealth().ok.body.json.status == .ok }
    }

    public func register(username: String, firstName: String, lastName: String, email: String, password: String) async throws -> PlayerProfile {
        try await call {
            try await $0.register(body: .json(.init(
                username: username, firstName: firstName, lastName: lastName, email: email, password: password
            ))).created.body.json
        }
    }

    public func logIn(username: String, password: String) async throws -> LobbySession {
        try await call { try await $0.logIn(body: .json(.init(username: username, password: password))).created.body.json }
    }

    public func me() async throws -> PlayerProfile { try await call { try await $0.getMe().ok.body.json } }

    /// Changes names, or the password: a new `password` needs `currentPassword`, and ends every
    /// session of the player (this client's too): log in again with it.
    public func updateMe(
        firstName: String? = nil, lastName: String? = nil, password: String? = nil, currentPassword: String? = nil
    ) async throws -> PlayerProfile {
        try await call {
            try await $0.updateMe(body: .json(.init(
                firstName: firstName, lastName: lastName, password: password, currentPassword: currentPassword))).ok.body.json
        }
    }

    public func deleteMe() async throws { try await call { _ = try await $0.deleteMe().noContent } }

    /// Replaces the player's photo: JPEG or PNG bytes (told apart by their signature).
    public func setPhoto(_ bytes: Data) async throws -> PlayerProfile {
        let body = HTTPBody(bytes)
        let isPNG = bytes.starts(with: [0x89, 0x50, 0x4E, 0x47])
        return try await call { try await $0.setPhoto(body: isPNG ? .png(body) : .jpeg(body)).ok.body.json }
    }

    /// The player advertising `identity` now (404 when nobody the caller may see does).
    public func resolve(_ identity: BeaconFrames.BeaconIdentity) async throws -> PublicProfile {
        let beacon = try PlayerBeacon.lookedUp(identity)
        return try await call {
            try await $0.resolveBeacon(path: .init(uuid: beacon.uuid.uuidString, major: beacon.major, minor: beacon.minor)).ok.body.json
        }
    }

    /// Reports the player beacons the agent saw. With a `key` (one per report, kept until the
    /// lobby acknowledged it), sending the same report again records nothing twice and returns the
    /// first receipt.
    public func reportEncounters(_ sightings: [EncounterSighting], key: String? = nil) async throws -> EncounterReceipt {
        try await call { try await $0.reportEncounters(body: .json(.init(key: key, sightings: sightings))).ok.body.json }
    }

    /// Invites players to a game. With a `key`, sending the same request again creates nothing
    /// and returns the invitation the first one created.
    public func invite(_ usernames: [String], key: String? = nil) async throws -> Invitation {
        try await call {
            switch try await $0.invite(body: .json(.init(invitees: usernames, key: key))) {
            case .created(let created): try created.body.json
            case .ok(let repeated): try repeated.body.json
            case let other: throw Self.unexpected(other)
            }
        }
    }

    public func invitations() async throws -> [Invitation] { try await call { try await $0.listInvitations().ok.body.json } }

    /// Accepts an invitation; accepting again (a retry) returns the invitation.
    public func accept(invitation id: Int64) async throws -> Invitation {
        try await call { try await $0.acceptInvitation(path: .init(id: id)).ok.body.json }
    }

    /// Declines an invitation; declining again (a retry) returns the invitation.
    public func decline(invitation id: Int64) async throws -> Invitation {
        try await call { try await $0.declineInvitation(path: .init(id: id)).ok.body.json }
    }

    public func games() async throws -> [LobbyGame] { try await call { try await $0.listGames().ok.body.json } }

    public func game(_ id: Int64) async throws -> LobbyGame { try await call { try await $0.getGame(path: .init(id: id)).ok.body.json } }

    /// Submits a round's score with the recording it was computed from, which the lobby verifies
    /// (status 422, code `scoreRefused`, when the claim does not stand); resubmitting with the same
    /// `key` (after a timeout, say) is safe. Record the round on the plan the game gives
    /// (``LobbyGame/Round/duration``, ``LobbyGame/Round/signalTime``).
    public func submitScore(game id: Int64, round n: Int, score: Int, recording: RoundRecording, key: String) async throws -> LobbyGame {
        try await call {
            switch try await $0.submitScore(path: .init(id: id, n: n), body: .json(.init(score: score, key: key, recording: recording))) {
            case .created(let created): try created.body.json
            case .ok(let repeated): try repeated.body.json
            case let other: throw Self.unexpected(other)
            }
        }
    }

    /// Stores this device's calibration, which the lobby verifies the player's scores with
    /// (status 422, code `calibrationRefused`, for one no device at rest gives).
    @discardableResult
    public func setCalibration(_ calibration: SensorCalibration) async throws -> SensorCalibration {
        try await call { try await $0.setCalibration(body: .json(calibration)).ok.body.json }
    }

    /// The calibration stored for the player's device, nil when none is.
    public func calibration() async throws -> SensorCalibration? {
        do {
            return try await call { try await $0.getCalibration().ok.body.json }
        } catch let error as LobbyClientError where error.status == 404 && error.code == .calibrationNotFound {
            return nil
        }
    }

    /// This device's radio offsets as the lobby solved them from the crowd's two-way readings,
    /// nil until it has (too few players exchanged readings with this one yet).
    public func radioOffsets() async throws -> LobbyRadioOffsets? {
        do {
            return try await call { try await $0.getRadioOffsets().ok.body.json }
        } catch let error as LobbyClientError where error.status == 404 && error.code == .radioOffsetsNotSolved {
            return nil
        }
    }

    public func unlocked() async throws -> [UnlockedPlayer] { try await call { try await $0.listUnlocked().ok.body.json } }

    public func block(_ username: String) async throws {
        try await call { _ = try await $0.block(path: .init(username: username)).noContent }
    }

    public func unblock(_ username: String) async throws {
        try await call { _ = try await $0.unblock(path: .init(username: username)).noContent }
    }

    /// Events after `cursor`; continue from the returned page's `next`.
    public func events(after cursor: Int64, limit: Int = 100) async throws -> EventPage {
        try await call { try await $0.listEvents(query: .init(after: cursor, limit: limit)).ok.body.json }
    }

    // MARK: - Transport

    /// The generated client for this lobby, token and timeout.
    func api() throws -> Client {
        guard let url = URL(string: baseURL), url.scheme != nil, url.host != nil else {
            throw LobbyClientError(
                status: 0, code: .invalidLobbyURL,
                message: "The lobby address '\(baseURL)' is not a URL like http://127.0.0.1:8080: correct it in the configuration.",
                excluded: [])
        }
        return Client(
            serverURL: url,
            configuration: Configuration(dateTranscoder: LobbyDateTranscoder()),
            transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient, timeout: timeout)),
            middlewares: [LobbyMiddleware(token: token)])
    }

    /// Runs an operation of the generated client, answering the lobby's error answers as
    /// ``LobbyClientError`` and a failed connection as the transport's own error.
    func call<Result: Sendable>(_ operation: (Client) async throws -> Result) async throws -> Result {
        do {
            return try await operation(try api())
        } catch let error as ClientError {
            if let lobby = error.underlyingError as? LobbyClientError { throw lobby }
            if error.response == nil { throw error.underlyingError }
            throw error
        }
    }

    /// A success status the document does not give the operation.
    static func unexpected(_ output: some Sendable) -> LobbyClientError {
        LobbyClientError(
            status: 0, code: .unexpectedResponse,
            message: "The lobby answered in a way its API document does not describe (\(output)): is it a different version?",
            excluded: [])
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(LobbyDateTranscoder.format(date))
        }
        return encoder
    }()

    /// Decodes the lobby's JSON (and the agent's answers, which pass it on): ISO 8601 times with
    /// or without fractions of a second.
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try LobbyDateTranscoder.parse(try decoder.singleValueContainer().decode(String.self))
        }
        return decoder
    }()
}

/// ISO 8601 times as the lobby writes them (with milliseconds) and reads them (with or without
/// fractions of a second).
struct LobbyDateTranscoder: DateTranscoder {
    static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static func parse(_ text: String) throws -> Date {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try Date(text, strategy: .iso8601)
    }

    func encode(_ date: Date) throws -> String { Self.format(date) }
    func decode(_ text: String) throws -> Date { try Self.parse(text) }
}

/// Sends the bearer token, and turns every answer outside 2xx into a ``LobbyClientError`` with
/// the lobby's code and message (the generated client then never sees it).
struct LobbyMiddleware: ClientMiddleware {
    var token: String?

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token { request.headerFields[.authorization] = "Bearer \(token)" }
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.kind != .successful else { return (response, responseBody) }
        var bytes = Data()
        if let responseBody { bytes = try await Data(collecting: responseBody, upTo: 1 << 20) }
        let detail = (try? JSONDecoder().decode(Components.Schemas.ErrorBody.self, from: bytes))?.error
        throw LobbyClientError(
            status: response.status.code, code: LobbyClientError.Code(rawValue: detail?.code ?? "http\(response.status.code)"),
            message: detail?.message ?? String(decoding: bytes.prefix(200), as: UTF8.self), excluded: detail?.excluded ?? [])
    }
}
