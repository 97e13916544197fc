import DatabaseTestSupport
import Foundation
import LobbyDatabase
import Synchronization
import Testing

/// Several lobby instances on one PostgreSQL: one lease holder at a time, and committed
/// notifications reaching every listener.
@Suite struct CoordinationTests {
    /// Waits up to `timeout` for `condition`; false when it never held.
    static func eventually(_ timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    @Test func oneInstanceHoldsALeaseAndAnotherTakesItOver() async throws {
        let url = try await PrivatePostgres.shared().createDatabase()
        let first = try await PostgresDatabase(url: url, poolSize: 1)
        let second = try await PostgresDatabase(url: url, poolSize: 1)
        let holders = Shared<[String: Bool]>([:])
        let duties = Shared<[String]>([])
        func hold(_ database: PostgresDatabase, as name: String) -> Task<Void, Never> {
            Task {
                await database.holdingLease("scheduler", interval: .milliseconds(200), onChange: { held in
                    holders.withLock { $0[name] = held }
                }) {
                    duties.withLock { $0.append(name) }
                    while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
                }
            }
        }
        let a = hold(first, as: "a")
        #expect(await Self.eventually { holders.withLock { $0["a"] == true } })
        let b = hold(second, as: "b")
        // b keeps trying and never gets it while a holds it.
        try await Task.sleep(for: .seconds(1))
        #expect(holders.withLock { $0["b"] } == nil)
        #expect(duties.withLock { $0 } == ["a"])

        // a goes away (its lease connection closes): b takes over within a few of its tries.
        let gone = ContinuousClock.now
        a.cancel()
        await a.value
        // (b says it holds the lease just before its duty starts.)
        #expect(await Self.eventually { holders.withLock { $0["b"] == true } && duties.withLock { $0.count } == 2 })
        let handOver = gone.duration(to: .now)
        #expect(handOver < .seconds(5), "hand-over took \(handOver)")
        #expect(duties.withLock { $0 } == ["a", "b"])
        b.cancel()
        await b.value
        try await first.close()
        try await second.close()
    }

    @Test func committedNotificationsReachListenersAndRolledBackOnesDoNot() async throws {
        struct Refusal: Error {}
        let url = try await PrivatePostgres.shared().createDatabase()
        let listener = try await PostgresDatabase(url: url, poolSize: 1)
        let writer = try await PostgresDatabase(url: url, poolSize: 2)
        let received = Shared<[PostgresDatabase.ChannelMessage]>([])
        let listening = Task {
            for await message in listener.messages(on: "lobby_events") { received.withLock { $0.append(message) } }
        }
        #expect(await Self.eventually { received.withLock { $0.contains(.listening) } })

        await #expect(throws: Refusal.self) {
            try await writer.write { db in
                try db.notify("lobby_events", "rolled back")
                throw Refusal()
            }
        }
        try await writer.write { db in try db.notify("lobby_events", "42") }
        #expect(await Self.eventually { received.withLock { $0.contains(.payload("42")) } })
        #expect(!received.withLock { $0 }.contains(.payload("rolled back")))
        // Sent inside the transaction, it arrives only at the commit: a reader never hears of a
        // row it cannot see yet.
        listening.cancel()
        await listening.value
        try await listener.close()
        try await writer.close()
    }

    @Test func leaseKeysAreStableAndDistinct() {
        #expect(PostgresDatabaseKeys.key("scheduler") == PostgresDatabaseKeys.key("scheduler"))
        #expect(PostgresDatabaseKeys.key("scheduler") != PostgresDatabaseKeys.key("cleanup"))
    }
}

/// A value several tasks read and change.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}
