import Foundation
import HummingbirdWSClient
import Logging
import Synchronization

extension LobbyClient {
    /// The player's events after `cursor` as they happen, over the lobby's WebSocket
    /// (`GET /v1/events/live?after=`): first every event after `cursor` the lobby holds, then each
    /// new one, in cursor order, each once.
    ///
    /// The stream does not end on its own: when the socket closes (the lobby restarts, the network
    /// drops, the token is refused) it ends with an error, a ``LobbyClientError`` with the code
    /// `liveEventsClosed` when the lobby closed it cleanly. Resume with the cursor of the last
    /// event handled to miss nothing and see nothing twice. Stopping the iteration closes the socket.
    ///
    /// A socket that does not open within `openTimeout` (a lobby or proxy that takes the
    /// connection and never answers the upgrade, a connection lost mid-handshake) ends the
    /// stream with the code `liveEventsTimedOut` rather than leaving it silent: reconnect, as
    /// after any other end.
    public func liveEvents(after cursor: Int64, openTimeout: Duration = .seconds(15)) -> AsyncThrowingStream<LobbyEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<LobbyEvent, any Error>.makeStream()
        let url = Self.webSocketURL(baseURL) + "/v1/events/live?after=\(cursor)"
        var configuration = WebSocketClientConfiguration()
        if let token { configuration.additionalHeaders[.authorization] = "Bearer \(token)" }
        let logger = logger
        let opened = OpenedFlag()
        let task = Task {
            do {
                let close = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, _, _ in
                    opened.set()
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        continuation.yield(try Self.decoder.decode(LobbyEvent.self, from: Data(text.utf8)))
                    }
                }
                let why = close.map { "code \($0.closeCode)\($0.reason.map { ", \($0)" } ?? "")" } ?? "no close frame"
                continuation.finish(throwing: LobbyClientError(
                    status: 0, code: .liveEventsClosed,
                    message: "The lobby closed the live event stream (\(why)): resume after the last cursor handled.", excluded: []))
            } catch {
                logger.debug("Live events from \(url) ended: \(error)")
                continuation.finish(throwing: error)
            }
        }
        // Finishing from here does not wait for the stalled connection to give up.
        let watchdog = Task {
            try await Task.sleep(for: openTimeout)
            guard !opened.isSet else { return }
            logger.debug("Live events from \(url) did not open within \(openTimeout).")
            continuation.finish(throwing: LobbyClientError(
                status: 0, code: .liveEventsTimedOut,
                message: "The lobby's live event stream did not open within \(openTimeout): reconnect and resume after the last cursor handled.",
                excluded: []))
            task.cancel()
        }
        continuation.onTermination = { _ in
            task.cancel()
            watchdog.cancel()
        }
        return stream
    }

    /// `http://…` → `ws://…`, `https://…` → `wss://…`.
    static func webSocketURL(_ baseURL: String) -> String {
        if baseURL.hasPrefix("https://") { return "wss://" + baseURL.dropFirst("https://".count) }
        if baseURL.hasPrefix("http://") { return "ws://" + baseURL.dropFirst("http://".count) }
        return baseURL
    }
}

/// Whether the live event socket opened, shared by its task and its watchdog.
private final class OpenedFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
