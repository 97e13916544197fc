import Foundation

// Temporary: the names the lobby branch gives these types; removed when it merges.
public typealias PlayerBeacon = BeaconIdentity
public typealias EncounterSighting = Sighting
public typealias LobbyGame = Game


extension LobbyClient {
    /// Temporary until the lobby branch's WebSocket client merges: the feed polled once a second.
    public func liveEvents(after cursor: Int64) -> AsyncThrowingStream<LobbyEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var next = cursor
                do {
                    while !Task.isCancelled {
                        let page = try await events(after: next)
                        for event in page.events { continuation.yield(event) }
                        next = page.next
                        if page.events.isEmpty { try await Task.sleep(for: .milliseconds(250)) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension Game.Round {
    /// Temporary until the lobby branch merges: the lobby does not say yet.
    public var duration: Double? { nil }
    public var signalTime: Double? { nil }
}
