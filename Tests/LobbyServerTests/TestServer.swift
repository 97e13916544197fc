import BeaconKeys
import AsyncHTTPClient
import DatabaseTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import LobbyDatabase
import Logging
import NIOCore
import Testing
@testable import Lobby
@testable import LobbyServer

/// A lobby store in a temporary folder and the application over it. Rounds are Statue unless
/// configured otherwise, so tests can record any score from 0 to 1000 (see `submitHonestly`).
/// On SQLite unless `NEARPLAY_LOBBY_ENGINE=postgres`, as `TestLobby`: `scripts/test` runs these
/// tests once on each engine.
final class TestServer: Sendable {
    let store: LobbyStore
    let folder: URL
    /// Where the store is: the SQLite file's path, or the PostgreSQL database's URL.
    let location: String
    let throttle: SignInThrottle
    let metrics = LobbyMetrics()
    let connectionLimits: ConnectionLimits

    init(
        throttle limits: SignInThrottle.Limits = .init(), connections: ConnectionLimits = .init(),
        _ configure: (inout LobbyConfiguration) -> Void = { _ in }
    ) async throws {
        throttle = SignInThrottle(limits)
        connectionLimits = connections
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-server-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = LobbyConfiguration(enabledMinigames: ["statue"], bcryptCost: 4)
        // Players here are established accounts, reported one way: the rules for new accounts
        // (invite only players met both ways) are FairPlayAttackTests' and FairPlayTests'.
        configuration.newAccountAge = 0
        configure(&configuration)
        if ProcessInfo.processInfo.environment["NEARPLAY_LOBBY_ENGINE"]?.lowercased() == "postgres" {
            let server = try await PrivatePostgres.shared()
            location = try await server.createDatabase()
        } else {
            location = folder.appendingPathComponent("lobby.sqlite").path
        }
        store = try await LobbyStore.open(location, configuration: configuration, metrics: metrics.factory, poolSize: 3)
    }

    /// A read transaction on the store, for tests that check its tables.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T {
        try await store.database.read(body)
    }

    deinit {
        if store.isShared { try? store.close() }
        try? FileManager.default.removeItem(at: folder)
    }

    var application: some ApplicationProtocol {
        var logger = Logger(label: "lobby-test")
        logger.logLevel = .warning
        return buildLobbyApplication(
            store: store, host: "127.0.0.1", port: 0, logger: logger, throttle: throttle, metrics: metrics, limits: connectionLimits)
    }
}

/// JSON helpers over HummingbirdTesting's client.
extension TestClientProtocol {
    @discardableResult
    func call(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, json: String? = nil, bytes: [UInt8]? = nil
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any], raw: Any?) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if json != nil { headers[.contentType] = "application/json" }
        let body = json.map { ByteBuffer(string: $0) } ?? bytes.map { ByteBuffer(bytes: $0) }
        return try await execute(uri: uri, method: method, headers: headers, body: body) { response in
            let data = Data(response.body.readableBytesView)
            let raw = data.isEmpty ? nil : try? JSONSerialization.jsonObject(with: data)
            return (response.status, raw as? [String: Any] ?? [:], raw)
        }
    }

    /// Registers and logs in `username`; returns the token and the beacon.
    func player(_ username: String) async throws -> (token: String, major: Int, minor: Int) {
        let registered = try await call(.post, "/v1/players", json: """
            {"username":"\(username)","firstName":"F","lastName":"L","email":"\(username)@example.org","password":"password-123"}
            """)
        #expect(registered.status == .created, "registering \(username): \(registered.body)")
        let session = try await call(.post, "/v1/sessions", json: #"{"username":"\#(username)","password":"password-123"}"#)
        let beacon = registered.body["beacon"] as? [String: Any] ?? [:]
        return (session.body["token"] as? String ?? "", beacon["major"] as? Int ?? -1, beacon["minor"] as? Int ?? -1)
    }

    /// `observer` reports hearing location `id` now, with the identity its beacon advertises
    /// now (learnt from the location's key, which only its owner may read).
    func see(_ observerToken: String, location id: Int, ownerToken: String) async throws {
        let key = try await call(.get, "/v1/locations/\(id)/beacon-key", token: ownerToken)
        #expect(key.status == .ok, "\(key.body)")
        let secret = try #require(BeaconSecret(base64URL: key.body["secret"] as? String ?? ""))
        let period = try #require(RotationPeriod(seconds: key.body["periodSeconds"] as? Int ?? 0))
        let uuid = try #require(key.body["locationUuid"] as? String)
        let (major, minor) = RotatingIdentity.location(secret, period: period.index(at: Date()))
        let now = Date().formatted(Date.ISO8601FormatStyle())
        let answer = try await call(.post, "/v1/encounters", token: observerToken, json: """
            {"sightings":[{"uuid":"\(uuid)","major":\(major),"minor":\(minor),"distance":1.2,"at":"\(now)"}]}
            """)
        #expect(answer.status == .ok && answer.body["recorded"] as? Int == 1, "\(answer.body)")
    }

    /// `observer` reports seeing the beacon now.
    func see(_ observerToken: String, _ beacon: (major: Int, minor: Int)) async throws {
        let now = Date().formatted(Date.ISO8601FormatStyle())
        let answer = try await call(.post, "/v1/encounters", token: observerToken, json: """
            {"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":\(beacon.major),"minor":\(beacon.minor),"distance":1.2,"at":"\(now)"}]}
            """)
        #expect(answer.status == .ok)
    }
}

/// A recording that is well formed JSON but no real round (for requests refused before verification).
let emptyRecordingJSON = #"{"game":"statue","duration":10,"levels":[],"accelerations":[],"calibration":{}}"#

func errorCode(_ body: [String: Any]) -> String? {
    (body["error"] as? [String: Any])?["code"] as? String
}
