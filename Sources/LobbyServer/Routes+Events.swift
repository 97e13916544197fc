import Foundation
import Hummingbird
import HummingbirdWebSocket
import Lobby
import NIOCore

/// The event feed (`GET /v1/events?after=`) and its live push (`GET /v1/events/live`, WebSocket).
func addEventRoutes(_ group: RouterGroup<LobbyRequestContext>, store: LobbyStore) {
    group.get("events") { request, context in
        let after = try cursor(request)
        let limit = try pageLimit(request)
        let events = try await store.events(try context.player(), after: after, limit: limit)
        return try JSONBody.response(.ok, EventPage(events: events, next: events.last?.cursor ?? after))
    }
    // Pushes every event after `?after=` (0 by default): first the backlog from the feed, then live
    // ones as they commit. It subscribes before reading the backlog so nothing falls in between.
    group.ws("events/live", shouldUpgrade: { request, context in
        _ = try context.player()
        _ = try cursor(request)
        // Asked without an upgrade, this route would answer an empty 200.
        guard request.headers[.upgrade]?.lowercased().contains("websocket") == true else {
            throw APIError(.upgradeRequired, .upgradeRequired,
                           "GET /v1/events/live is a WebSocket: connect with `Upgrade: websocket` (or read GET /v1/events).")
        }
        return .upgrade([:])
    }, onUpgrade: { inbound, outbound, context in
        guard let playerId = context.requestContext.playerId else { return }
        let first = (try? cursor(context.request)) ?? 0
        let live = store.events.subscribe(playerId: playerId)
        /// Writes the feed's events after `last`; returns the last cursor written.
        @Sendable func sendFeed(after last: Int64) async throws -> Int64 {
            var last = last
            while true {
                let backlog = try await store.events(playerId, after: last, limit: 500)
                for event in backlog {
                    try await outbound.write(.text(try encode(event)))
                    last = event.cursor
                }
                if backlog.count < 500 { return last }
            }
        }
        let caughtUp = try await sendFeed(after: first)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                // Returns when the client closes; its messages carry nothing.
                for try await _ in inbound.messages(maxSize: 4096) {}
            }
            tasks.addTask {
                // An agent with its event stream open is on the air: others may report it.
                while !Task.isCancelled {
                    store.noteActive(playerId)
                    try await Task.sleep(for: .seconds(30))
                }
            }
            tasks.addTask {
                var last = caughtUp
                for await event in live {
                    // A client slower than the events lost some from its buffer: they are in
                    // the feed, after the last cursor it was sent.
                    if live.takeOverflow() { last = try await sendFeed(after: last) }
                    guard event.cursor > last else { continue }
                    try await outbound.write(.text(try encode(event)))
                    last = event.cursor
                }
            }
            try await tasks.next()
            tasks.cancelAll()
        }
    })
}

/// `?limit=`: 1 to 1000, 100 when absent.
private func pageLimit(_ request: Request) throws -> Int {
    guard let text = request.uri.queryParameters.get("limit") else { return 100 }
    guard let value = Int(text), (1...1000).contains(value) else {
        throw APIError(.badRequest, .invalidField, "limit: expected a whole number from 1 to 1000, got \"\(text.prefix(40))\".")
    }
    return value
}

private func cursor(_ request: Request) throws -> Int64 {
    guard let text = request.uri.queryParameters.get("after") else { return 0 }
    guard let value = Int64(text), value >= 0 else {
        throw APIError(.badRequest, .invalidField, "after: the cursor must be a non-negative integer, got \"\(text.prefix(40))\".")
    }
    return value
}

private func encode(_ event: LobbyEvent) throws -> String {
    String(decoding: try JSONBody.encoder.encode(event), as: UTF8.self)
}
