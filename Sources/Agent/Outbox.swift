import Foundation
import GRDB
import LobbyClient
import Logging
import Minigames
import Radio

/// An operation for the lobby that must arrive exactly once, even across lobby outages and
/// agent crashes.
public enum OutgoingOperation: Codable, Sendable {
    case encounters([EncounterSighting])
    case invite([String])
    case answer(invitation: Int64, accept: Bool)
    /// A round's score with its recording, which the lobby verifies.
    case score(game: Int64, round: Int, score: Int, recording: RoundRecording)
    case block(String)
    /// A tournament round's score with its recording, which the lobby verifies.
    case tournamentScore(tournament: Int64, round: Int, score: Int, recording: RoundRecording)

    /// The word stored with the row and shown in events.
    public var kind: String {
        switch self {
        case .encounters: "encounters"
        case .invite: "invite"
        case .answer(_, let accept): accept ? "accept" : "decline"
        case .score: "score"
        case .block: "block"
        case .tournamentScore: "tournament score"
        }
    }

    public var summary: String {
        switch self {
        case .encounters(let sightings): "encounter report (\(sightings.count) players)"
        case .invite(let players): "invitation to \(players.joined(separator: ", "))"
        case .answer(let id, let accept): "\(accept ? "acceptance" : "refusal") of invitation \(id)"
        case .score(let game, let round, let score, _): "score \(score) for round \(round) of game \(game)"
        case .block(let player): "block of \(player)"
        case .tournamentScore(let tournament, let round, let score, _): "score \(score) for round \(round) of tournament \(tournament)"
        }
    }
}

/// What became of a queued operation.
public enum OutboxOutcome: Sendable, Equatable {
    /// The lobby took it; the JSON of its answer.
    case sent(Data)
    /// The lobby refused it (a 4xx): it will not be sent again.
    case refused(code: String, message: String)
}

/// The durable outgoing queue. `enqueue` returns once the operation is committed to the
/// agent's store, so a SIGKILL after that loses nothing; the sender delivers operations in the
/// order queued, each with its row's idempotency key, so a retry after a lost answer cannot
/// apply it twice. A transport failure is retried with backoff (0.25 s doubling to 8 s); an
/// answer the lobby refuses (4xx) drops the operation and says why. Accepting or declining
/// again is harmless (the lobby answers a repeated answer with 200), and so is a repeated block.
public actor Outbox {
    private let store: AgentStore
    private let lobby: LobbyClient
    private let events: AgentEventBus
    private let logger: Logger
    private let clock: AgentClock
    private let wakeStream: AsyncStream<Void>
    private let wakeContinuation: AsyncStream<Void>.Continuation
    /// Callers of ``outcome(of:timeout:)`` waiting, by key and by a number of their own.
    private var waiters: [String: [Int: CheckedContinuation<OutboxOutcome?, Never>]] = [:]
    private var nextWaiter = 0
    /// Outcomes of the last operations sent, for a caller that asks just after.
    private var recent: [String: OutboxOutcome] = [:]
    private var recentOrder: [String] = []
    private var lobbyReachable = true

    public init(store: AgentStore, lobby: LobbyClient, events: AgentEventBus, logger: Logger = Logger(label: "nearplay.outbox"),
                clock: AgentClock = .system) {
        self.clock = clock
        self.store = store
        self.lobby = lobby
        self.events = events
        self.logger = logger
        (wakeStream, wakeContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues `operation` durably and returns its idempotency key. `setting`, when given, is
    /// stored in the same transaction (a round marked played together with its score).
    @discardableResult
    public func enqueue(_ operation: OutgoingOperation, alsoSetting setting: (name: String, value: String)? = nil) throws(AgentError) -> String {
        let key = UUID().uuidString.lowercased()
        do {
            let body = try JSONEncoder().encode(operation)
            try store.database.write { db in
                try db.execute(sql: "INSERT INTO outbox (kind, key, body, createdAt) VALUES (?, ?, ?, ?)",
                               arguments: [operation.kind, key, body, clock.now.timeIntervalSince1970])
                if let setting {
                    try db.execute(sql: "INSERT INTO setting (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                                   arguments: [setting.name, setting.value])
                }
            }
        } catch {
            throw AgentError("Could not queue the \(operation.summary): \(error).", code: "stateUnavailable")
        }
        events.publish(.queued(operation: operation.summary))
        wakeContinuation.yield()
        return key
    }

    /// Waits up to `timeout` for the operation queued under `key` to be sent or refused; nil
    /// when it is still waiting (the lobby is away).
    public func outcome(of key: String, timeout: Duration) async -> OutboxOutcome? {
        if let known = recent[key] { return known }
        guard pending(key) else { return nil }
        let waiter = nextWaiter
        nextWaiter += 1
        return await withTaskGroup(of: Void.self, returning: OutboxOutcome?.self) { group in
            group.addTask { [clock] in
                // Timed out, or the caller was cancelled: either way this caller stops waiting
                // (and only this one: others may wait for the same key longer).
                try? await clock.sleep(for: timeout)
                await self.stopWaiting(key, waiter: waiter)
            }
            let outcome = await withCheckedContinuation { waiters[key, default: [:]][waiter] = $0 }
            group.cancelAll()
            return outcome
        }
    }

    /// Operations still waiting.
    public var count: Int { (try? store.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM outbox") }) ?? 0 }

    /// Sends until cancelled.
    public func run() async {
        var backoff = Backoff()
        var wake = wakeStream.makeAsyncIterator()
        while !Task.isCancelled {
            switch await sendNext() {
            case .idle:
                backoff.reset()
                _ = await wake.next()
            case .progressed:
                backoff.reset()
            case .unreachable:
                do { try await clock.wait(&backoff) } catch { return }
            }
        }
    }

    /// Sends what is queued until the queue is empty or `deadline` passes (at shutdown).
    /// Returns the number left.
    public func flush(within deadline: Duration) async -> Int {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled, await self.sendNext() == .progressed {}
            }
            group.addTask { [clock] in
                // The deadline, or a cancelled flush: either way the sending stops.
                try? await clock.sleep(for: deadline)
            }
            await group.next()
            group.cancelAll()
        }
        return count
    }

    enum SendResult: Equatable { case idle, progressed, unreachable }

    private func sendNext() async -> SendResult {
        let row: Row?
        do {
            row = try store.database.read { try Row.fetchOne($0, sql: "SELECT id, key, body FROM outbox ORDER BY id LIMIT 1") }
        } catch {
            logger.error("cannot read the outgoing queue: \(error)")
            return .unreachable
        }
        guard let row else { return .idle }
        let id: Int64 = row["id"]
        let key: String = row["key"]
        let body: Data = row["body"]
        guard let operation = try? JSONDecoder().decode(OutgoingOperation.self, from: body) else {
            logger.error("dropping an unreadable queued operation \(key)")
            remove(id)
            return .progressed
        }
        do {
            let answer = try await send(operation, key: key)
            remove(id)
            if !lobbyReachable {
                lobbyReachable = true
                events.publish(.lobbyConnected())
            }
            events.publish(.sent(operation: operation.summary))
            resolve(key, .sent(answer))
            return .progressed
        } catch let error as LobbyClientError where (400..<500).contains(error.status) && error.status != 408 && error.status != 429 {
            remove(id)
            logger.notice("the lobby refused the \(operation.summary): \(error.message)")
            events.publish(.refused(operation: operation.summary, reason: error.message))
            resolve(key, .refused(code: error.code.rawValue, message: error.message))
            return .progressed
        } catch {
            _ = try? await store.database.write {
                try $0.execute(sql: "UPDATE outbox SET attempts = attempts + 1, lastError = ? WHERE id = ?", arguments: ["\(error)", id])
            }
            if lobbyReachable {
                lobbyReachable = false
                logger.notice("the lobby is unreachable (\(error)); \(count) operations wait")
                events.publish(.lobbyDisconnected(reason: "\(error)"))
            }
            return .unreachable
        }
    }

    private func send(_ operation: OutgoingOperation, key: String) async throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        switch operation {
        case .encounters(let sightings):
            return try encoder.encode(try await lobby.reportEncounters(sightings, key: key))
        case .invite(let players):
            return try encoder.encode(try await lobby.invite(players, key: key))
        case .answer(let id, let accept):
            return try encoder.encode(accept ? try await lobby.accept(invitation: id) : try await lobby.decline(invitation: id))
        case .score(let game, let round, let score, let recording):
            return try encoder.encode(try await lobby.submitScore(game: game, round: round, score: score, recording: recording, key: key))
        case .block(let player):
            try await lobby.block(player)
            return Data("{}".utf8)
        case .tournamentScore(let tournament, let round, let score, let recording):
            return try encoder.encode(try await lobby.submitTournamentScore(
                tournament: tournament, round: round, score: score, recording: recording, key: key))
        }
    }

    private func pending(_ key: String) -> Bool {
        (try? store.database.read { try Bool.fetchOne($0, sql: "SELECT EXISTS (SELECT 1 FROM outbox WHERE key = ?)", arguments: [key]) }) == true
    }

    private func remove(_ id: Int64) {
        do {
            try store.database.write { try $0.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [id]) }
        } catch {
            logger.error("cannot remove a sent operation from the queue: \(error)")
        }
    }

    private func resolve(_ key: String, _ outcome: OutboxOutcome?) {
        if let outcome {
            recent[key] = outcome
            recentOrder.append(key)
            if recentOrder.count > 64 { recent[recentOrder.removeFirst()] = nil }
        }
        for waiter in (waiters.removeValue(forKey: key) ?? [:]).values { waiter.resume(returning: outcome) }
    }

    private func stopWaiting(_ key: String, waiter: Int) {
        waiters[key]?.removeValue(forKey: waiter)?.resume(returning: nil)
        if waiters[key]?.isEmpty == true { waiters[key] = nil }
    }
}
