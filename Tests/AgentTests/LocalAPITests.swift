import Agent
import BeaconFrames
import BusTestSupport
import Foundation
import Testing

/// The local API: request parsing, the socket's permissions, refusing other users, streaming.
@Suite struct LocalAPITests {
    @Test func parsesEveryVerbAndRoundTripsItsLine() throws {
        let requests: [AgentRequest] = [.status, .nearby, .invite(players: ["bob", "carol"]), .invitations, .accept(invitation: 3),
                                        .decline(invitation: 4), .games, .play(game: 5), .stats(player: "bob"), .unlocked,
                                        .block(player: "eve"), .locations, .tournaments(), .tournaments(location: 3), .join(tournament: 9),
                                        .events(), .events(recent: 20), .achievements,
                                        .leaderboard(board: "week"), .leaderboard(board: "day", date: "2027-01-31", offset: 40, limit: 10)]
        for request in requests { #expect(try AgentRequest(line: request.line) == request) }
    }

    @Test(arguments: [
        ("not json", "not a JSON object"),
        ("[1,2]", "not a JSON object"),
        ("{}", "verb: missing"),
        ("{\"verb\":\"dance\"}", "\"dance\" is not a verb"),
        ("{\"verb\":\"accept\"}", "id: expected a positive whole number"),
        ("{\"verb\":\"accept\",\"id\":-2}", "id: expected a positive whole number"),
        ("{\"verb\":\"accept\",\"id\":\"7\"}", "id"),
        ("{\"verb\":\"accept\",\"id\":1.5}", "id"),
        ("{\"verb\":\"invite\",\"players\":[]}", "players: expected a list of 1 to 20 usernames"),
        ("{\"verb\":\"invite\",\"players\":\"bob\"}", "players"),
        ("{\"verb\":\"stats\"}", "player: expected a username"),
        ("{\"verb\":7}", "verb"),
        ("{\"verb\":\"events\",\"recent\":1000}", "recent: expected 0 to 256"),
        ("{\"verb\":\"join\"}", "tournament: expected a positive whole number"),
        ("{\"verb\":\"join\",\"tournament\":0}", "tournament: expected a positive whole number"),
        ("{\"verb\":\"tournaments\",\"location\":-1}", "location: expected a positive whole number"),
        ("{\"verb\":\"leaderboard\"}", "board: expected day, week, month, all or league"),
        ("{\"verb\":\"leaderboard\",\"board\":\"day\",\"limit\":0}", "limit: expected 1 to 100"),
        ("{\"verb\":\"leaderboard\",\"board\":\"day\",\"offset\":-1}", "offset: expected 0 or more"),
    ])
    func refusesMalformedRequestsNamingTheField(line: String, expected: String) {
        #expect {
            try AgentRequest(line: line)
        } throws: { error in
            guard let error = error as? AgentError else { return false }
            return error.code == "badRequest" && error.message.contains(expected)
        }
    }

    @Test func socketIsOwnerOnlyAndAnswersRequests() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/run/agent.sock"
        let server = LocalAPIServer(path: path, events: { _ in AsyncStream { $0.finish() } }) { request in
            request == .status ? .encoding(["hello": "world"]) : .failure(AgentError("no", code: "nope"))
        }
        try server.start()
        defer { server.stop() }
        #expect(try mode(of: path) == 0o600)
        #expect(try mode(of: folder.path + "/run") == 0o700)
        let client = AgentClient(path: path)
        #expect(String(decoding: try await blocking { try client.send(.status) }, as: UTF8.self) == "{\"hello\":\"world\"}")
        await #expect(throws: AgentError("no", code: "nope")) { try await blocking { try client.send(.nearby) } }
        // A malformed line gets an error naming the problem, and the connection stays usable.
        let reply = try await blocking { try rawExchange(path, ["{\"verb\":\"accept\",\"id\":0}", "{\"verb\":\"status\"}"]) }
        #expect(reply.count == 2)
        #expect(reply[0].contains("\"ok\":false") && reply[0].contains("id: expected a positive whole number"))
        #expect(reply[1] == "{\"ok\":true,\"result\":{\"hello\":\"world\"}}")
    }

    @Test func refusesAnotherUser() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/agent.sock"
        // Served only to a uid that is not ours: the kernel's peer credentials decide.
        let server = LocalAPIServer(path: path, allowedUser: getuid() &+ 4242, events: { _ in AsyncStream { $0.finish() } }) { _ in
            .encoding(["secret": true])
        }
        try server.start()
        defer { server.stop() }
        await #expect {
            try await blocking { try AgentClient(path: path).send(.status) }
        } throws: { error in
            (error as? AgentError)?.code == "permissionDenied"
        }
        // An event stream is refused the same way: the refusal is thrown, not handed out as an event.
        let handedOut = Flag()
        await #expect {
            try await blocking { try AgentClient(path: path).events(idleTimeout: 5) { _ in handedOut.set(); return true } }
        } throws: { error in
            (error as? AgentError)?.code == "permissionDenied"
        }
        #expect(!handedOut.isSet)
    }

    @Test func responseLinesPutOkFirstAsDocumented() throws {
        #expect(AgentResponse.result(Data(#"{"a":"b/c"}"#.utf8)).line == #"{"ok":true,"result":{"a":"b/c"}}"#)
        let refusal = AgentResponse.failure(AgentError("Say \"why\" on\na/b.", code: "badRequest"))
        #expect(refusal.line == #"{"ok":false,"error":{"code":"badRequest","message":"Say \"why\" on\na/b."}}"#)
        #expect(try AgentResponse(line: refusal.line) == refusal)
    }

    @Test func refusesASecondAgentOnTheSameSocketAndReplacesAStaleOne() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/agent.sock"
        // A stale socket file (an agent killed with SIGKILL) is replaced.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (i, b) in path.utf8.enumerated() { buffer[i] = b } }
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        close(stale)
        #expect(FileManager.default.fileExists(atPath: path))
        let first = LocalAPIServer(path: path, events: { _ in AsyncStream { $0.finish() } }) { _ in .encoding(1) }
        try first.start()
        defer { first.stop() }
        let second = LocalAPIServer(path: path, events: { _ in AsyncStream { $0.finish() } }) { _ in .encoding(2) }
        #expect(throws: AgentError.self) { try second.start() }
        #expect(String(decoding: try await blocking { try AgentClient(path: path).send(.status) }, as: UTF8.self) == "1")
    }

    @Test func streamsEventsUntilTheClientHangsUp() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/agent.sock"
        let bus = AgentEventBus()
        let server = LocalAPIServer(path: path, events: { bus.subscribe(recent: $0) }) { _ in .encoding(0) }
        try server.start()
        defer { server.stop() }
        // Two events before anyone listens: `recent` brings them back first, in order.
        bus.publish(.lobbyConnected())
        bus.publish(.queued(operation: "early"))
        let publisher = Task {
            while bus.subscriberCount == 0 { try? await Task.sleep(for: .milliseconds(5)) }
            for i in 0..<200 {
                bus.publish(.playerNearby(.init(player: "p\(i)", name: "P\(i)", distance: 1.5, zone: .near)))
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        defer { publisher.cancel() }
        let received = try await blocking {
            var received: [AgentEvent] = []
            // Generous: under the whole suite other tests can hold the task pool for seconds.
            try AgentClient(path: path).events(recent: 1, idleTimeout: 60) { line in
                if let event = try? JSONDecoder().decode(AgentEvent.self, from: Data(line.utf8)) { received.append(event) }
                return received.count < 4
            }
            return received
        }
        #expect(received.count == 4)
        #expect(received.first?.kind == .queued && received.first?.operation == "early")
        #expect(received.dropFirst().allSatisfy { $0.kind == .playerNearby && $0.zone == "near" && $0.distance == 1.5 })
    }
}

/// Runs blocking socket work on a thread of its own: the cooperative pool (two threads on two
/// cores) must stay free for the server's tasks.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}

func mode(of path: String) throws -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { throw AgentError("no \(path)") }
    return info.st_mode & 0o777
}

/// Sends raw lines on one connection and reads as many answers.
func rawExchange(_ path: String, _ lines: [String]) throws -> [String] {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (i, b) in path.utf8.enumerated() { buffer[i] = b } }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else { throw AgentError("cannot connect to \(path)") }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let text = lines.joined(separator: "\n") + "\n"
    _ = text.withCString { send(fd, $0, strlen($0), 0) }
    var answers: [String] = []
    var buffer: [UInt8] = []
    while answers.count < lines.count {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { break }
        buffer.append(contentsOf: chunk[0..<n])
        while let newline = buffer.firstIndex(of: 10) {
            answers.append(String(decoding: buffer[..<newline], as: UTF8.self))
            buffer.removeSubrange(...newline)
        }
    }
    return answers
}

/// The event lines of `nearplay events --json`.
@Suite struct AgentEventFormatTests {
    @Test func writesKeysInAFixedOrderAndReadsBack() throws {
        let time = Date(timeIntervalSince1970: 1_790_000_000.25)
        // A round's result carries no player (the enum has no room for one), so the name that
        // needs escaping moved to an answer, which does.
        let event = AgentEvent.roundFinished(game: 7, round: 2, scores: ["bob": 400, "alice": 880], winner: "alice", at: time)
        #expect(event.jsonLine == #"{"t":"2026-09-21T14:13:20.250Z","event":"round_finished","game":7,"round":2,"scores":{"alice":880,"bob":400},"winner":"alice"}"#)
        #expect(try JSONDecoder().decode(AgentEvent.self, from: Data(event.jsonLine.utf8)) == event)
        let answer = AgentEvent.invitationAnswered(by: "bob \"b\"", game: 7, response: .declined, at: time)
        #expect(answer.jsonLine == #"{"t":"2026-09-21T14:13:20.250Z","event":"invitation_answered","player":"bob \"b\"","game":7,"response":"declined"}"#)
        #expect(try JSONDecoder().decode(AgentEvent.self, from: Data(answer.jsonLine.utf8)) == answer)
        let nearby = AgentEvent.playerNearby(.init(player: "bob", name: "Bob", distance: 2.5, zone: .near), at: time)
        #expect(nearby.jsonLine == #"{"t":"2026-09-21T14:13:20.250Z","event":"player_nearby","player":"bob","name":"Bob","distance_m":2.50,"zone":"near"}"#)
    }

    @Test func aLocationEventListsItsTournamentsInTheSameOrder() throws {
        let time = Date(timeIntervalSince1970: 1_790_000_000.25)
        let ends = Date(timeIntervalSince1970: 1_790_035_200)
        let event = AgentEvent.location(.init(location: 3, name: "Hall \"A\"", beacon: BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/0/3")!,
                                              distance: 1.234, zone: .near, tournaments: [.init(id: 7, period: "daily", endsAt: ends)]), at: time)
        #expect(event.jsonLine == #"{"t":"2026-09-21T14:13:20.250Z","event":"location","name":"Hall \"A\"","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/0/3","distance_m":1.23,"zone":"near","location":3,"tournaments":[{"id":7,"period":"daily","ends_at":"2026-09-22T00:00:00.000Z"}]}"#)
        #expect(try JSONDecoder().decode(AgentEvent.self, from: Data(event.jsonLine.utf8)).tournaments == event.tournaments)
        let played = AgentEvent.roundPlayed(.tournament(7), round: 1, minigame: .statue, score: 900, at: time)
        #expect(played.jsonLine == #"{"t":"2026-09-21T14:13:20.250Z","event":"round_played","tournament":7,"round":1,"minigame":"statue","score":900}"#)
        #expect(try JSONDecoder().decode(AgentEvent.self, from: Data(played.jsonLine.utf8)) == played)
        #expect(AgentEvent.tournamentFinished(tournament: 7, winner: "alice", at: time).sentence == "tournament 7 finished: alice won")
        #expect(played.sentence == "you played round 1 (statue) of tournament 7: 900 points")
    }
}
