import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
@testable import LobbyServer

/// A clock the tests move by hand.
final class ManualSeconds: Sendable {
    private let value = Mutex<TimeInterval>(1000)
    var now: TimeInterval { value.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { value.withLock { $0 += seconds } }
}

@Suite struct SignInThrottleTests {
    static let small = SignInThrottle.Limits(
        accountBurst: 3, accountInterval: 30, addressBurst: 6, addressInterval: 10, registrationBurst: 2, registrationInterval: 60)
    /// The same bursts on the wall clock, refilled slowly enough that a slow run (bcrypt on a
    /// loaded machine took 47 s once) does not earn an attempt back before the test spends it.
    static let smallLive = SignInThrottle.Limits(
        accountBurst: 3, accountInterval: 3600, addressBurst: 6, addressInterval: 3600, registrationBurst: 2, registrationInterval: 3600)

    @Test func refusesAnAccountOverItsBurstButNotAnotherAccount() {
        let clock = ManualSeconds()
        let throttle = SignInThrottle(Self.small, now: { clock.now })
        for _ in 0..<3 { #expect(throttle.admit(.signIn(username: "alice"), from: "10.0.0.1") == nil) }
        #expect(throttle.admit(.signIn(username: "alice"), from: "10.0.0.1") == 30)
        #expect(throttle.admit(.signIn(username: "ALICE"), from: "10.0.0.9") == 30, "case and address change nothing")
        #expect(throttle.admit(.signIn(username: "bob"), from: "10.0.0.1") == nil)
        clock.advance(30)
        #expect(throttle.admit(.signIn(username: "alice"), from: "10.0.0.1") == nil, "one attempt earned back in 30 s")
        #expect(throttle.admit(.signIn(username: "alice"), from: "10.0.0.1") == 30)
    }

    @Test func refusesAnAddressOverItsBurstButNotAnotherAddress() {
        let clock = ManualSeconds()
        let throttle = SignInThrottle(Self.small, now: { clock.now })
        for index in 0..<6 { #expect(throttle.admit(.signIn(username: "user\(index)"), from: "10.0.0.1") == nil) }
        #expect(throttle.admit(.signIn(username: "fresh"), from: "10.0.0.1") == 10)
        #expect(throttle.admit(.signIn(username: "fresh"), from: "10.0.0.2") == nil)
        clock.advance(4)
        #expect(throttle.admit(.signIn(username: "other"), from: "10.0.0.1") == 6, "Retry-After counts down")
    }

    @Test func aSuccessfulSignInGivesTheAccountItsAttemptsBack() {
        let clock = ManualSeconds()
        let throttle = SignInThrottle(Self.small, now: { clock.now })
        for _ in 0..<3 { _ = throttle.admit(.signIn(username: "alice"), from: "10.0.0.1") }
        throttle.signedIn("alice")
        #expect(throttle.admit(.signIn(username: "alice"), from: "10.0.0.1") == nil)
    }

    @Test func registrationsAreCountedPerAddressAndPerName() {
        let clock = ManualSeconds()
        let throttle = SignInThrottle(Self.small, now: { clock.now })
        #expect(throttle.admit(.registration(username: "a1"), from: "10.0.0.1") == nil)
        #expect(throttle.admit(.registration(username: "a2"), from: "10.0.0.1") == nil)
        #expect(throttle.admit(.registration(username: "a3"), from: "10.0.0.1") == 60)
        #expect(throttle.admit(.registration(username: "a3"), from: "10.0.0.2") == nil)
        // Registering does not spend the sign-in budget of the same name.
        #expect(throttle.admit(.signIn(username: "a1"), from: "10.0.0.3") == nil)
    }

    /// Over HTTP: a guesser of alice's password is refused with 429, `Retry-After` and the API's JSON
    /// error, even with the right password (so no bcrypt runs for it); bob, from the same address,
    /// still signs in; once the address is spent, a client from another address is not refused.
    @Test func aPasswordGuesserIsRefusedAndOthersAreNot() async throws {
        let server = try await TestServer(throttle: Self.smallLive)
        try await server.application.test(.live) { client in
            _ = try await client.player("alice")
            _ = try await client.player("bob")
            for _ in 0..<3 {
                let guess = try await client.call(.post, "/v1/sessions", json: #"{"username":"alice","password":"guess-1234"}"#)
                #expect(guess.status == .unauthorized)
            }
            let refused = try await client.execute(
                uri: "/v1/sessions", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"username":"alice","password":"password-123"}"#))
            #expect(refused.status == .tooManyRequests)
            #expect(Int(refused.headers[.retryAfter] ?? "") ?? 0 >= 1)
            let body = try JSONSerialization.jsonObject(with: Data(refused.body.readableBytesView)) as? [String: Any] ?? [:]
            #expect(errorCode(body) == "tooManyAttempts")

            // The two sign-ins of `player` and alice's 3 guesses spent 5 of the address's 6 (the
            // refused attempt is not counted).
            let bob = try await client.call(.post, "/v1/sessions", json: #"{"username":"bob","password":"password-123"}"#)
            #expect(bob.status == .created)
            let spent = try await client.call(.post, "/v1/sessions", json: #"{"username":"bob","password":"password-123"}"#)
            #expect(spent.status == .tooManyRequests, "the address has used its burst")

            let port = try #require(client.port)
            let elsewhere = try await rawPost(
                from: "127.0.0.2", port: port, path: "/v1/sessions", json: #"{"username":"bob","password":"password-123"}"#)
            #expect(elsewhere.hasPrefix("HTTP/1.1 201"), "another address is not refused: \(elsewhere.prefix(200))")

            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            #expect(metrics.contains(#"nearplay_lobby_throttled_attempts_total{kind="signIn"} 2"#), "\(metrics)")
        }
    }
}

/// POSTs `json` over a socket bound to `source` (any 127/8 address reaches 127.0.0.1 on Linux) and
/// returns the raw answer: the lobby sees a client address other than the test client's. The
/// blocking socket runs on a thread of its own, off the two-thread cooperative pool.
func rawPost(from source: String, port: Int, path: String, json: String) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try rawPostNow(from: source, port: port, path: path, json: json) }) }
    }
}

private func rawPostNow(from source: String, port: Int, path: String, json: String) throws -> String {
    do {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        func address(_ text: String, _ port: Int) -> sockaddr_in {
            var value = sockaddr_in()
            value.sin_family = sa_family_t(AF_INET)
            value.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, text, &value.sin_addr)
            return value
        }
        var local = address(source, 0)
        var remote = address("127.0.0.1", port)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) } }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, size) } }
        guard connected == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let request = Array("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\nConnection: close\r\n\r\n\(json)".utf8)
        // A signal to this thread interrupts send and recv (EINTR): go on, as a client must.
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            sent += count
        }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            if count == 0 { break }
            answer += buffer[0..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
